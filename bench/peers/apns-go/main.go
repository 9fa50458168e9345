// apns-go: a peer for bench/apns-client.sh and bench/dispatch.sh, written for Blimp on Go's standard library alone:
// net/http's HTTP/2 client (the transport Go APNs libraries such as gorush's are built on) and one ES256 provider
// token. It sends N Live Activity updates, each to a new 64-hex token, with at most M in flight over C connections,
// and prints one line in the shape apns-client-bench prints:
//
//	apns-go: <sent> sent, <ok> ok, <failed> failed, <connections> connections, <seconds>s, <rate> req/s
//
// Usage: apns-go -url https://127.0.0.1:2197 -ca ca.pem -p8 AuthKey.p8 [-kid K] [-team T] [-topic T] [-n 100000] [-c 1] [-m 1000]
package main

import (
	"bytes"
	"context"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/sha256"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// The WWDC23 sample update, as apns-client-bench sends it.
var payload = []byte(`{"aps":{"timestamp":1685952000,"event":"update","content-state":{"currentHealthLevel":0.941,"eventDescription":"Power Panda found a sword!"}}}`)

func main() {
	url := flag.String("url", "https://127.0.0.1:2197", "APNs base URL")
	caFile := flag.String("ca", "", "PEM file of the CA to trust (default: the system's)")
	p8 := flag.String("p8", "", "the .p8 signing key (PKCS#8 PEM, P-256)")
	kid := flag.String("kid", "ABC123DEFG", "the key's id (the token's kid)")
	team := flag.String("team", "DEF123GHIJ", "the team id (the token's iss)")
	topic := flag.String("topic", "com.example.app.push-type.liveactivity", "apns-topic")
	requests := flag.Int("n", 100000, "requests")
	connections := flag.Int("c", 1, "connections")
	inFlight := flag.Int("m", 1000, "requests in flight")
	flag.Parse()
	if *requests < 1 || *connections < 1 || *inFlight < 1 {
		fail("-n, -c and -m take positive numbers")
	}

	token, err := providerToken(*p8, *kid, *team)
	if err != nil {
		fail("cannot make the provider token: %v", err)
	}
	tlsConfig := &tls.Config{NextProtos: []string{"h2"}}
	if *caFile != "" {
		pemBytes, err := os.ReadFile(*caFile)
		if err != nil {
			fail("cannot read %s: %v", *caFile, err)
		}
		tlsConfig.RootCAs = x509.NewCertPool()
		if !tlsConfig.RootCAs.AppendCertsFromPEM(pemBytes) {
			fail("%s holds no PEM certificate", *caFile)
		}
	}

	// One client per connection, each transport held to one (MaxConnsPerHost): a request beyond the server's stream
	// limit waits for a stream instead of opening another connection. Dials are counted and printed.
	var dials atomic.Int64
	clients := make([]*http.Client, *connections)
	for i := range clients {
		dialer := &net.Dialer{Timeout: 10 * time.Second}
		clients[i] = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{
			TLSClientConfig:   tlsConfig,
			ForceAttemptHTTP2: true,
			MaxConnsPerHost:   1,
			DialContext: func(ctx context.Context, network, address string) (net.Conn, error) {
				dials.Add(1)
				return dialer.DialContext(ctx, network, address)
			},
		}}
	}
	send := func(client *http.Client, index int) bool {
		request, err := http.NewRequest(http.MethodPost, fmt.Sprintf("%s/3/device/%064x", *url, index+1), bytes.NewReader(payload))
		if err != nil {
			fail("bad URL: %v", err)
		}
		request.Header.Set("authorization", "bearer "+token)
		request.Header.Set("apns-push-type", "liveactivity")
		request.Header.Set("apns-topic", *topic)
		request.Header.Set("apns-priority", "10")
		response, err := client.Do(request)
		if err != nil {
			return false
		}
		io.Copy(io.Discard, response.Body)
		response.Body.Close()
		return response.StatusCode == http.StatusOK
	}

	// One request on each connection first, untimed, as apns-client-bench does: it opens the connection (and, on
	// APNs, lifts the stream limit of a new connection).
	for _, client := range clients {
		if !send(client, 0) {
			fail("the first request was not accepted")
		}
	}

	var next, ok atomic.Int64
	var group sync.WaitGroup
	started := time.Now()
	for worker := 0; worker < *inFlight; worker++ {
		group.Add(1)
		go func(client *http.Client) {
			defer group.Done()
			for {
				index := int(next.Add(1) - 1)
				if index >= *requests {
					return
				}
				if send(client, index) {
					ok.Add(1)
				}
			}
		}(clients[worker%*connections])
	}
	group.Wait()
	seconds := time.Since(started).Seconds()
	fmt.Printf("apns-go: %d sent, %d ok, %d failed, %d connections, %.2fs, %.0f req/s\n",
		*requests, ok.Load(), int64(*requests)-ok.Load(), dials.Load(), seconds, float64(*requests)/seconds)
}

// providerToken signs APNs's provider token: an ES256 JWT of {"alg":"ES256","kid":kid} and {"iss":team,"iat":now},
// its signature r and s as 32 bytes each (RFC 7518 §3.4).
func providerToken(p8File, kid, team string) (string, error) {
	pemBytes, err := os.ReadFile(p8File)
	if err != nil {
		return "", err
	}
	block, _ := pem.Decode(pemBytes)
	if block == nil {
		return "", fmt.Errorf("%s holds no PEM block", p8File)
	}
	parsed, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return "", err
	}
	key, isECDSA := parsed.(*ecdsa.PrivateKey)
	if !isECDSA {
		return "", fmt.Errorf("%s is not an ECDSA key", p8File)
	}
	encode := func(value any) string {
		data, _ := json.Marshal(value)
		return base64.RawURLEncoding.EncodeToString(data)
	}
	signingInput := encode(map[string]string{"alg": "ES256", "kid": kid}) + "." + encode(map[string]any{"iss": team, "iat": time.Now().Unix()})
	digest := sha256.Sum256([]byte(signingInput))
	r, s, err := ecdsa.Sign(rand.Reader, key, digest[:])
	if err != nil {
		return "", err
	}
	signature := make([]byte, 64)
	r.FillBytes(signature[:32])
	s.FillBytes(signature[32:])
	return signingInput + "." + base64.RawURLEncoding.EncodeToString(signature), nil
}

func fail(format string, arguments ...any) {
	fmt.Fprintf(os.Stderr, "apns-go: "+format+"\n", arguments...)
	os.Exit(2)
}
