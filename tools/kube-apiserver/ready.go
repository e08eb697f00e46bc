package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"time"
)

// adminClient talks to the new server as the static-token admin, verifying its certificate with the CA.
type adminClient struct {
	serverURL string
	token     string
	http      *http.Client
}

func newAdminClient(serverURL string, creds credentials) (*adminClient, error) {
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(creds.caPEM) {
		return nil, errors.New("no certificate in the generated CA PEM")
	}
	transport := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}
	return &adminClient{
		serverURL: serverURL,
		token:     creds.adminToken,
		http:      &http.Client{Transport: transport, Timeout: 5 * time.Second},
	}, nil
}

// waitUntilReady polls until /readyz answers 200 and the default namespace exists (it is created by a
// post-start controller that /readyz does not wait for), then returns the server's gitVersion.
func (c *adminClient) waitUntilReady(ctx context.Context) (string, error) {
	ticker := time.NewTicker(100 * time.Millisecond)
	defer ticker.Stop()
	lastErr := errors.New("no attempt yet")
	for {
		if lastErr = c.ready(ctx); lastErr == nil {
			return c.gitVersion(ctx)
		}
		select {
		case <-ctx.Done():
			return "", fmt.Errorf("%w (last error: %v)", ctx.Err(), lastErr)
		case <-ticker.C:
		}
	}
}

func (c *adminClient) ready(ctx context.Context) error {
	for _, path := range []string{"/readyz", "/api/v1/namespaces/default"} {
		if _, err := c.get(ctx, path); err != nil {
			return err
		}
	}
	return nil
}

func (c *adminClient) gitVersion(ctx context.Context) (string, error) {
	body, err := c.get(ctx, "/version")
	if err != nil {
		return "", err
	}
	var info struct {
		GitVersion string `json:"gitVersion"`
	}
	if err := json.Unmarshal(body, &info); err != nil {
		return "", fmt.Errorf("decode /version: %w", err)
	}
	return info.GitVersion, nil
}

func (c *adminClient) get(ctx context.Context, path string) ([]byte, error) {
	request, err := http.NewRequestWithContext(ctx, http.MethodGet, c.serverURL+path, nil)
	if err != nil {
		return nil, err
	}
	request.Header.Set("Authorization", "Bearer "+c.token)
	response, err := c.http.Do(request)
	if err != nil {
		return nil, err
	}
	defer response.Body.Close()
	body, err := io.ReadAll(response.Body)
	if err != nil {
		return nil, err
	}
	if response.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: HTTP %d: %.200s", path, response.StatusCode, body)
	}
	return body, nil
}
