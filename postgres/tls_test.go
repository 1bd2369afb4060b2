package postgres_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/cairnhq/cairn/internal/pgtest"
	"github.com/cairnhq/cairn/memory"
	"github.com/cairnhq/cairn/postgres"
)

// writeCerts makes a CA and a server certificate for 127.0.0.1 signed by
// it, and returns the files' paths.
func writeCerts(t *testing.T) (ca, cert, key string) {
	t.Helper()
	dir := t.TempDir()
	caKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "cairn test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour), IsCA: true,
		KeyUsage: x509.KeyUsageCertSign, BasicConstraintsValid: true}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	srvKey, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	srvTmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: "127.0.0.1"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(24 * time.Hour),
		IPAddresses: []net.IP{net.ParseIP("127.0.0.1")}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	caCert, _ := x509.ParseCertificate(caDER)
	srvDER, err := x509.CreateCertificate(rand.Reader, srvTmpl, caCert, &srvKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, _ := x509.MarshalECPrivateKey(srvKey)
	write := func(name, typ string, der []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600); err != nil {
			t.Fatal(err)
		}
		return p
	}
	return write("ca.pem", "CERTIFICATE", caDER), write("server.crt", "CERTIFICATE", srvDER), write("server.key", "EC PRIVATE KEY", keyDER)
}

// A server that accepts only TLS connections: cairn connects with
// sslmode=verify-full against the CA, the doctor says the connection is
// encrypted, and without TLS the connection is refused with a clear
// db_error.
func TestTLSConnections(t *testing.T) {
	if _, err := pgtest.FindBin(); err != nil {
		pgtest.Unavailable(t, err)
	}
	ca, cert, key := writeCerts(t)
	srv, err := pgtest.Start(pgtest.Options{TLSCert: cert, TLSKey: key,
		HBA: "local all all trust\nhostssl all all 127.0.0.1/32 trust\nhostnossl all all 127.0.0.1/32 reject\n"})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	base := fmt.Sprintf("postgres://%s@127.0.0.1:%d/postgres", srv.Superuser, srv.Port)

	db, err := postgres.Open(ctx, base+"?sslmode=verify-full&sslrootcert="+ca+"&cairn_vectors=array", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.AppendObservations(ctx, []memory.NewObservation{note("o1", "over the wire", memory.Scope{})}); err != nil {
		t.Fatal(err)
	}
	fs, err := db.Check(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fs[0].Detail, "over TLS") {
		t.Fatalf("doctor's database finding %q does not say the connection is encrypted", fs[0].Detail)
	}
	_, err = postgres.Open(ctx, base+"?sslmode=disable", nil)
	if memory.CodeOf(err) != memory.CodeDBError || !strings.Contains(err.Error(), "sslmode") {
		t.Fatalf("connecting without TLS to a server that requires it: %v", err)
	}
	_, err = postgres.Open(ctx, base+"?sslmode=verify-full", nil) // no CA: the certificate does not verify
	if memory.CodeOf(err) != memory.CodeDBError {
		t.Fatalf("connecting without the CA: %v", err)
	}
}
