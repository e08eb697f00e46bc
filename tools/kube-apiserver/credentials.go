package main

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// adminUser is the static-token identity the tests use. Its group system:masters is bound to cluster-admin
// by RBAC's bootstrap policy, so it can do anything, including creating narrower identities to test RBAC.
const (
	adminUser  = "eniflow-test-admin"
	adminGroup = "system:masters"
)

// credentials are the files generated for one server start, plus the admin token in clear text.
type credentials struct {
	caFile                       string
	caPEM                        []byte
	servingCertFile              string
	servingKeyFile               string
	serviceAccountPrivateKeyFile string
	serviceAccountPublicKeyFile  string
	tokenFile                    string
	adminToken                   string
}

func (c credentials) caDataBase64() string {
	return base64.StdEncoding.EncodeToString(c.caPEM)
}

// writeCredentials generates a fresh CA, a serving certificate for every name a client may use to reach the
// server, a service-account signing key pair and a static token file, all under <stateDir>/pki.
func writeCredentials(stateDir string) (credentials, error) {
	pkiDir := filepath.Join(stateDir, "pki")
	if err := os.MkdirAll(pkiDir, 0o700); err != nil {
		return credentials{}, err
	}
	creds := credentials{
		caFile:                       filepath.Join(pkiDir, "ca.crt"),
		servingCertFile:              filepath.Join(pkiDir, "apiserver.crt"),
		servingKeyFile:               filepath.Join(pkiDir, "apiserver.key"),
		serviceAccountPrivateKeyFile: filepath.Join(pkiDir, "sa.key"),
		serviceAccountPublicKeyFile:  filepath.Join(pkiDir, "sa.pub"),
		tokenFile:                    filepath.Join(pkiDir, "tokens.csv"),
	}

	caKey, caCert, caPEM, err := newCertificateAuthority()
	if err != nil {
		return credentials{}, fmt.Errorf("CA: %w", err)
	}
	creds.caPEM = caPEM
	if err := os.WriteFile(creds.caFile, caPEM, 0o600); err != nil {
		return credentials{}, err
	}

	servingCertPEM, servingKeyPEM, err := newServingCertificate(caKey, caCert)
	if err != nil {
		return credentials{}, fmt.Errorf("serving certificate: %w", err)
	}
	if err := os.WriteFile(creds.servingCertFile, servingCertPEM, 0o600); err != nil {
		return credentials{}, err
	}
	if err := os.WriteFile(creds.servingKeyFile, servingKeyPEM, 0o600); err != nil {
		return credentials{}, err
	}

	saPrivatePEM, saPublicPEM, err := newServiceAccountKeyPair()
	if err != nil {
		return credentials{}, fmt.Errorf("service-account keys: %w", err)
	}
	if err := os.WriteFile(creds.serviceAccountPrivateKeyFile, saPrivatePEM, 0o600); err != nil {
		return credentials{}, err
	}
	if err := os.WriteFile(creds.serviceAccountPublicKeyFile, saPublicPEM, 0o600); err != nil {
		return credentials{}, err
	}

	if creds.adminToken, err = randomHex(32); err != nil {
		return credentials{}, err
	}
	// Format: token,user,uid,"group1,group2" (kube-apiserver --token-auth-file).
	tokenLine := fmt.Sprintf("%s,%s,%s,%q\n", creds.adminToken, adminUser, adminUser, adminGroup)
	if err := os.WriteFile(creds.tokenFile, []byte(tokenLine), 0o600); err != nil {
		return credentials{}, err
	}
	return creds, nil
}

func newCertificateAuthority() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber:          serial,
		Subject:               pkix.Name{CommonName: "eniflow-testenv-ca"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, template, template, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return nil, nil, nil, err
	}
	return key, cert, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), nil
}

// newServingCertificate covers the loopback addresses and the in-cluster names, so a client may use any of
// them with verification on.
func newServingCertificate(caKey *ecdsa.PrivateKey, caCert *x509.Certificate) (certPEM, keyPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	serial, err := randomSerial()
	if err != nil {
		return nil, nil, err
	}
	now := time.Now()
	template := &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: "kube-apiserver"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames: []string{
			"localhost",
			"kubernetes",
			"kubernetes.default",
			"kubernetes.default.svc",
			"kubernetes.default.svc.cluster.local",
		},
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1"), net.ParseIP("::1"), net.ParseIP(kubernetesServiceIP)},
	}
	der, err := x509.CreateCertificate(rand.Reader, template, caCert, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: keyDER}), nil
}

func newServiceAccountKeyPair() (privatePEM, publicPEM []byte, err error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	privateDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return nil, nil, err
	}
	publicDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, nil, err
	}
	return pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: privateDER}),
		pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: publicDER}), nil
}

func randomSerial() (*big.Int, error) {
	return rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
}

func randomHex(byteCount int) (string, error) {
	buf := make([]byte, byteCount)
	if _, err := rand.Read(buf); err != nil {
		return "", err
	}
	return hex.EncodeToString(buf), nil
}

// writeKubeconfig writes a kubeconfig for the admin token. JSON is valid YAML, so kubectl and
// @kubernetes/client-node read it like any other kubeconfig.
func writeKubeconfig(path, serverURL string, creds credentials) error {
	const name = "eniflow-testenv"
	kubeconfig := map[string]any{
		"apiVersion":      "v1",
		"kind":            "Config",
		"current-context": name,
		"clusters": []any{map[string]any{
			"name":    name,
			"cluster": map[string]any{"server": serverURL, "certificate-authority-data": creds.caDataBase64()},
		}},
		"users": []any{map[string]any{
			"name": name,
			"user": map[string]any{"token": creds.adminToken},
		}},
		"contexts": []any{map[string]any{
			"name":    name,
			"context": map[string]any{"cluster": name, "user": name},
		}},
	}
	data, err := json.MarshalIndent(kubeconfig, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o600)
}
