// Command kube-apiserver-testenv runs a real kube-apiserver, with etcd embedded in the same process, on
// 127.0.0.1 for eniflow's integration tests.
//
// At start it generates everything a fresh control plane needs (a CA, a serving certificate, service-account
// signing keys and a static admin token), starts etcd and kube-apiserver on free loopback ports, waits until
// /readyz answers and the default namespace exists, writes a kubeconfig and prints one JSON line with the
// connection details on stdout. Logs go to stderr. SIGINT/SIGTERM (or EOF on stdin with -exit-on-stdin-eof)
// shut both servers down; the state directory is removed when this process created it.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"go.etcd.io/etcd/server/v3/embed"
	genericapiserver "k8s.io/apiserver/pkg/server"
	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"          // lets --logging-format=json work, as upstream's main does
	_ "k8s.io/component-base/metrics/prometheus/clientgo" // client-go metrics, as upstream's main registers them
	_ "k8s.io/component-base/metrics/prometheus/version"  // the build-info metric, as upstream's main registers it
	"k8s.io/kubernetes/cmd/kube-apiserver/app"
)

// serviceClusterIPRange is the Service CIDR; its first address is the "kubernetes" Service IP, which the
// serving certificate therefore lists.
const (
	serviceClusterIPRange = "10.0.0.0/24"
	kubernetesServiceIP   = "10.0.0.1"
	serviceAccountIssuer  = "https://kubernetes.default.svc.cluster.local"
)

type options struct {
	stateDir       string
	securePort     int
	readyTimeout   time.Duration
	exitOnStdinEOF bool
	extraArgs      []string
}

// readyLine is the single JSON line printed on stdout once the server is ready. The TypeScript test
// harness (scripts/lib/) parses it, so field names are part of its contract.
type readyLine struct {
	URL        string `json:"url"`
	CAFile     string `json:"caFile"`
	CAData     string `json:"caData"`
	Token      string `json:"token"`
	Kubeconfig string `json:"kubeconfig"`
	StateDir   string `json:"stateDir"`
	EtcdURL    string `json:"etcdUrl"`
	Version    string `json:"version"`
	PID        int    `json:"pid"`
}

func main() {
	os.Exit(run())
}

func run() int {
	opts, err := parseOptions(os.Args[1:])
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}

	ownsStateDir := opts.stateDir == ""
	if ownsStateDir {
		if opts.stateDir, err = os.MkdirTemp("", "kube-apiserver-testenv-"); err != nil {
			fmt.Fprintln(os.Stderr, "create state dir:", err)
			return 1
		}
		defer os.RemoveAll(opts.stateDir)
	}

	credentials, err := writeCredentials(opts.stateDir)
	if err != nil {
		fmt.Fprintln(os.Stderr, "write credentials:", err)
		return 1
	}

	etcd, etcdURL, err := startEtcd(filepath.Join(opts.stateDir, "etcd"))
	if err != nil {
		fmt.Fprintln(os.Stderr, "start etcd:", err)
		return 1
	}
	defer etcd.Close()

	securePort := opts.securePort
	if securePort == 0 {
		if securePort, err = freeLoopbackPort(); err != nil {
			fmt.Fprintln(os.Stderr, "pick a port for kube-apiserver:", err)
			return 1
		}
	}
	serverURL := "https://" + net.JoinHostPort("127.0.0.1", strconv.Itoa(securePort))

	// NewAPIServerCommand installs the SIGINT/SIGTERM handler that starts a graceful shutdown, so it must be
	// created exactly once; RequestShutdown below goes through the same path.
	command := app.NewAPIServerCommand()
	command.SetArgs(append(apiserverArgs(apiserverArgsInput{
		stateDir:    opts.stateDir,
		securePort:  securePort,
		etcdURL:     etcdURL,
		credentials: credentials,
	}), opts.extraArgs...))
	apiserverDone := make(chan struct{})
	apiserverCode := 0
	go func() {
		apiserverCode = cli.Run(command)
		close(apiserverDone)
	}()
	waitForExit := func(fallback int) int {
		<-apiserverDone
		if apiserverCode != 0 {
			return apiserverCode
		}
		return fallback
	}

	if opts.exitOnStdinEOF {
		go func() {
			_, _ = io.Copy(io.Discard, os.Stdin)
			genericapiserver.RequestShutdown()
		}()
	}

	client, err := newAdminClient(serverURL, credentials)
	if err != nil {
		fmt.Fprintln(os.Stderr, "build readiness client:", err)
		genericapiserver.RequestShutdown()
		return waitForExit(1)
	}
	readyCtx, cancelReady := context.WithTimeout(context.Background(), opts.readyTimeout)
	defer cancelReady()
	go func() {
		// Stop waiting for readiness as soon as the apiserver gives up on its own (bad flag, port taken).
		select {
		case <-apiserverDone:
			cancelReady()
		case <-readyCtx.Done():
		}
	}()
	version, err := client.waitUntilReady(readyCtx)
	if err != nil {
		fmt.Fprintln(os.Stderr, "kube-apiserver did not become ready:", err)
		genericapiserver.RequestShutdown()
		return waitForExit(1)
	}

	kubeconfigPath := filepath.Join(opts.stateDir, "kubeconfig")
	if err := writeKubeconfig(kubeconfigPath, serverURL, credentials); err != nil {
		fmt.Fprintln(os.Stderr, "write kubeconfig:", err)
		genericapiserver.RequestShutdown()
		return waitForExit(1)
	}

	line, err := json.Marshal(readyLine{
		URL:        serverURL,
		CAFile:     credentials.caFile,
		CAData:     credentials.caDataBase64(),
		Token:      credentials.adminToken,
		Kubeconfig: kubeconfigPath,
		StateDir:   opts.stateDir,
		EtcdURL:    etcdURL,
		Version:    version,
		PID:        os.Getpid(),
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "encode ready line:", err)
		genericapiserver.RequestShutdown()
		return waitForExit(1)
	}
	fmt.Println(string(line))

	return waitForExit(0)
}

func parseOptions(args []string) (options, error) {
	flags := flag.NewFlagSet("kube-apiserver-testenv", flag.ContinueOnError)
	var opts options
	flags.StringVar(&opts.stateDir, "state-dir", "", "directory for certificates, keys, token file, kubeconfig and etcd data (default: a temporary directory removed at exit)")
	flags.IntVar(&opts.securePort, "secure-port", 0, "HTTPS port on 127.0.0.1 (default: a free port)")
	flags.DurationVar(&opts.readyTimeout, "ready-timeout", 2*time.Minute, "how long to wait for /readyz")
	flags.BoolVar(&opts.exitOnStdinEOF, "exit-on-stdin-eof", false, "shut down when stdin reaches EOF, so the server cannot outlive a parent that holds the other end of a pipe")
	flags.Usage = func() {
		fmt.Fprintln(flags.Output(), "usage: kube-apiserver-testenv [flags] [-- extra kube-apiserver flags]")
		flags.PrintDefaults()
	}
	if err := flags.Parse(args); err != nil {
		return options{}, err
	}
	opts.extraArgs = flags.Args()
	if opts.readyTimeout <= 0 {
		return options{}, errors.New("-ready-timeout must be positive")
	}
	return opts, nil
}

type apiserverArgsInput struct {
	stateDir    string
	securePort  int
	etcdURL     string
	credentials credentials
}

// apiserverArgs follows envtest's defaults (loopback only, RBAC, no ServiceAccount admission because no
// controller-manager creates default ServiceAccounts) and keeps the service-account token authenticator and
// TokenRequest API working, so tests can authenticate as a ServiceAccount to check RBAC rules.
func apiserverArgs(in apiserverArgsInput) []string {
	return []string{
		"--etcd-servers=" + in.etcdURL,
		"--bind-address=127.0.0.1",
		"--advertise-address=127.0.0.1",
		"--secure-port=" + strconv.Itoa(in.securePort),
		"--cert-dir=" + filepath.Join(in.stateDir, "pki"),
		"--tls-cert-file=" + in.credentials.servingCertFile,
		"--tls-private-key-file=" + in.credentials.servingKeyFile,
		"--token-auth-file=" + in.credentials.tokenFile,
		"--authorization-mode=RBAC",
		"--disable-admission-plugins=ServiceAccount",
		"--service-account-issuer=" + serviceAccountIssuer,
		"--service-account-key-file=" + in.credentials.serviceAccountPublicKeyFile,
		"--service-account-signing-key-file=" + in.credentials.serviceAccountPrivateKeyFile,
		"--service-cluster-ip-range=" + serviceClusterIPRange,
		"--allow-privileged=true",
		// No other apiserver replicas and no routable address: skip the kubernetes Endpoints reconciler.
		"--endpoint-reconciler-type=none",
		// Priority and fairness only adds CPU load and queueing to a single-user test server.
		"--enable-priority-and-fairness=false",
		"--profiling=false",
	}
}

// startEtcd starts a single-member etcd on free loopback ports. Fsync is off: the data lives only as long as
// the test run.
func startEtcd(dataDir string) (*embed.Etcd, string, error) {
	clientPort, err := freeLoopbackPort()
	if err != nil {
		return nil, "", err
	}
	peerPort, err := freeLoopbackPort()
	if err != nil {
		return nil, "", err
	}
	clientURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(clientPort))}
	peerURL := url.URL{Scheme: "http", Host: net.JoinHostPort("127.0.0.1", strconv.Itoa(peerPort))}

	cfg := embed.NewConfig()
	cfg.Name = "testenv"
	cfg.Dir = dataDir
	cfg.ListenClientUrls = []url.URL{clientURL}
	cfg.AdvertiseClientUrls = []url.URL{clientURL}
	cfg.ListenPeerUrls = []url.URL{peerURL}
	cfg.AdvertisePeerUrls = []url.URL{peerURL}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	cfg.UnsafeNoFsync = true
	// kube-apiserver's watch cache relies on progress notifications to serve consistent reads from cache.
	cfg.WatchProgressNotifyInterval = 5 * time.Second
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{"stderr"}

	etcd, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, "", err
	}
	select {
	case <-etcd.Server.ReadyNotify():
		return etcd, clientURL.String(), nil
	case err := <-etcd.Err():
		etcd.Close()
		return nil, "", err
	case <-time.After(time.Minute):
		etcd.Close()
		return nil, "", errors.New("etcd did not become ready within a minute")
	}
}

// freeLoopbackPort asks the kernel for a free port. Another process could take it before it is bound again;
// on loopback in a test run that race is unlikely enough.
func freeLoopbackPort() (int, error) {
	listener, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer listener.Close()
	addr, ok := listener.Addr().(*net.TCPAddr)
	if !ok {
		return 0, fmt.Errorf("unexpected listener address %v", listener.Addr())
	}
	return addr.Port, nil
}
