package server

import (
	"context"
	"crypto/x509"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	v1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apiserver/pkg/authentication/user"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	bootstrapapi "k8s.io/cluster-bootstrap/token/api"

	"github.com/orca-project/orca/internal/auth/bootstrappolicy"
	"github.com/orca-project/orca/internal/auth/bootstraptoken"
	"github.com/orca-project/orca/internal/auth/pki"
)

// TokenFile is where the server keeps the cluster's join token, in its
// data directory.
const TokenFile = "token"

// joinTokenDescription marks the Secret of the server's own join token.
const joinTokenDescription = "Orca cluster join token, created by the server at first start"

// setupJoin makes the cluster joinable: the join token (created at first
// start and kept in DATA_DIR/token, its Secret put back if it went
// missing while the file stayed) and kube-public/cluster-info, the CA
// and address a joining machine starts from. It returns the join token
// and whether it was created now.
func setupJoin(ctx context.Context, opts Options, tlsDir string, ca *pki.Pair, port int) (string, bool, error) {
	cfg, err := loopbackConfig(opts, tlsDir, ca, port, "apiserver-loopback", "system:apiserver", []string{user.SystemPrivilegedGroup}, "orca-apiserver", 50, 100)
	if err != nil {
		return "", false, err
	}
	client, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", false, err
	}
	if err := ensureClusterInfo(ctx, client, joinURL(opts, port), ca.CertPEM); err != nil {
		return "", false, err
	}
	join, created, err := ensureToken(ctx, client, filepath.Join(opts.DataDir, TokenFile), ca, bootstraptoken.Spec{
		Description: joinTokenDescription,
		Usages:      []string{"authentication", "signing"}, Groups: []string{bootstraptoken.NodeGroup},
	})
	if err != nil {
		return "", false, err
	}
	if _, _, err := ensureToken(ctx, client, filepath.Join(opts.DataDir, ServerTokenFile), ca, bootstraptoken.Spec{
		Description: serverTokenDescription,
		Usages:      []string{"authentication"}, Groups: []string{bootstrappolicy.ServerBootstrapGroup},
	}); err != nil {
		return "", false, err
	}
	return join, created, nil
}

// ensureToken loads or creates the token kept at path and makes sure its
// Secret exists (put back if it went missing while the file stayed).
func ensureToken(ctx context.Context, client kubernetes.Interface, path string, ca *pki.Pair, spec bootstraptoken.Spec) (string, bool, error) {
	join, created, err := loadOrCreateJoinToken(path, ca.Cert)
	if err != nil {
		return "", false, err
	}
	if _, spec.Token, err = bootstraptoken.ParseJoinToken(join); err != nil {
		return "", false, fmt.Errorf("token in %s: %w", path, err)
	}
	secret, _, err := spec.Secret(time.Now())
	if err != nil {
		return "", false, err
	}
	if _, err := client.CoreV1().Secrets(metav1.NamespaceSystem).Create(ctx, secret, metav1.CreateOptions{}); err != nil && !apierrors.IsAlreadyExists(err) {
		return "", false, fmt.Errorf("token secret: %w", err)
	}
	return join, created, nil
}

// joinURL is the address other machines reach this server at.
func joinURL(opts Options, port int) string {
	host := opts.AdvertiseAddress
	if host == "" {
		host = "127.0.0.1"
	}
	return "https://" + net.JoinHostPort(host, strconv.Itoa(port))
}

// loadOrCreateJoinToken reads the join token file, or writes a new token
// bound to the CA; a token for another CA (a data dir restored onto a
// new CA) is an error rather than silently replaced.
func loadOrCreateJoinToken(path string, ca *x509.Certificate) (string, bool, error) {
	b, err := os.ReadFile(path)
	switch {
	case err == nil:
		join := strings.TrimSpace(string(b))
		pin, _, err := bootstraptoken.ParseJoinToken(join)
		if err != nil {
			return "", false, fmt.Errorf("join token in %s: %w", path, err)
		}
		if pin != bootstraptoken.Pin(ca) {
			return "", false, fmt.Errorf("join token in %s was made for another cluster CA; remove the file to make a new one", path)
		}
		return join, false, nil
	case !errors.Is(err, fs.ErrNotExist):
		return "", false, fmt.Errorf("read join token: %w", err)
	}
	_, token, err := bootstraptoken.Spec{}.Secret(time.Now())
	if err != nil {
		return "", false, err
	}
	join := bootstraptoken.JoinToken(ca, token)
	if err := os.WriteFile(path, []byte(join+"\n"), 0o600); err != nil {
		return "", false, fmt.Errorf("write join token: %w", err)
	}
	return join, true, nil
}

// ensureClusterInfo writes kube-public/cluster-info as kubeadm does: a
// kubeconfig naming the server and the CA, readable without credentials.
// A joining machine trusts it only once the CA's hash matches its token.
func ensureClusterInfo(ctx context.Context, client kubernetes.Interface, server string, caPEM []byte) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters[""] = &clientcmdapi.Cluster{Server: server, CertificateAuthorityData: caPEM}
	data, err := clientcmd.Write(*kc)
	if err != nil {
		return err
	}
	want := &v1.ConfigMap{
		ObjectMeta: metav1.ObjectMeta{Name: bootstrapapi.ConfigMapClusterInfo, Namespace: metav1.NamespacePublic},
		Data:       map[string]string{bootstrapapi.KubeConfigKey: string(data)},
	}
	cms := client.CoreV1().ConfigMaps(metav1.NamespacePublic)
	cur, err := cms.Get(ctx, want.Name, metav1.GetOptions{})
	switch {
	case apierrors.IsNotFound(err):
		_, err = cms.Create(ctx, want, metav1.CreateOptions{})
	case err == nil && cur.Data[bootstrapapi.KubeConfigKey] != want.Data[bootstrapapi.KubeConfigKey]:
		cur.Data = want.Data
		_, err = cms.Update(ctx, cur, metav1.UpdateOptions{})
	}
	if err != nil {
		return fmt.Errorf("cluster-info: %w", err)
	}
	return nil
}
