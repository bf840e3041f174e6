package service

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"reflect"
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"

	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
)

// hostileRequest is one request of the hostile burst: a path, its headers and a body.
type hostileRequest struct {
	name   string
	path   string
	header map[string]string
	body   string
	b      bool // interface B's envelope
}

// hostileRequests are unauthenticated requests of about 1 MiB each, of every kind a client
// can make expensive for edge — nested PHP forms, many flat pairs, deep JSON, many multipart
// parts, many headers — to interface B, interface A and an owner-token read, without
// credentials and with wrong ones.
func hostileRequests() []hostileRequest {
	const size = 1<<20 - 256 // within interface A's and B's 1 MiB, so edge reads every one
	fill := func(prefix, unit, suffix string) string {
		n := (size - len(prefix) - len(suffix)) / len(unit)
		return prefix + strings.Repeat(unit, n) + suffix
	}
	const form = "application/x-www-form-urlencoded"
	const boundary = "hostileboundary"
	mp := "multipart/form-data; boundary=" + boundary
	part := func(name string) string {
		return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + name + "\"\r\n\r\nx\r\n"
	}
	bodies := []struct {
		name, ct, b, a string // the body, as B and A send their pair (prefix)
	}{
		{"nested form", form, "", ""},
		{"flat pairs", form, "", ""},
		{"deep JSON", "application/json", "", ""},
		{"deep JSON list", "application/json", "", ""},
		{"multipart parts", mp, "", ""},
		{"nested multipart", mp, "", ""},
	}
	body := func(kind, creds string) string {
		switch kind {
		case "nested form":
			return fill(creds, "a[][][][][][][]=&", "")
		case "flat pairs":
			return fill(creds, "a=&", "")
		case "deep JSON":
			return fill(`{`+creds+`"a":`, "[", "")
		case "deep JSON list":
			return fill("", "[", "")
		case "multipart parts":
			return fill(creds, part("a[]"), "--"+boundary+"--\r\n")
		case "nested multipart":
			return fill(creds, part("a[][][][][][][]"), "--"+boundary+"--\r\n")
		}
		panic(kind)
	}
	formCreds := func(ct, k1, v1, k2, v2 string) string {
		switch {
		case strings.HasPrefix(ct, "multipart/"):
			return "--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + k1 + "\"\r\n\r\n" + v1 + "\r\n" +
				"--" + boundary + "\r\nContent-Disposition: form-data; name=\"" + k2 + "\"\r\n\r\n" + v2 + "\r\n"
		case ct == form:
			return k1 + "=" + v1 + "&" + k2 + "=" + v2 + "&"
		}
		return fmt.Sprintf("%q:%q,%q:%q,", k1, v1, k2, v2)
	}
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte("a_nosuchuser:wrong-password"))
	var out []hostileRequest
	for _, k := range bodies {
		ct := map[string]string{"Content-Type": k.ct}
		with := func(h map[string]string) map[string]string {
			m := map[string]string{"Content-Type": k.ct}
			for x, v := range h {
				m[x] = v
			}
			return m
		}
		out = append(out,
			hostileRequest{"B, no credentials, " + k.name, "/vros/external-booking", ct, body(k.name, ""), true},
			hostileRequest{"B, wrong key/pass, " + k.name, "/vros/external-booking", ct,
				body(k.name, formCreds(k.ct, "key", "k_nosuchkey", "pass", "wrong")), true},
			hostileRequest{"A, no credentials, " + k.name, "/api/property", ct, body(k.name, ""), false},
			hostileRequest{"A, wrong Basic, no pair, " + k.name, "/api/property", with(map[string]string{"Authorization": wrongBasic}),
				body(k.name, ""), false},
			hostileRequest{"A, wrong Basic, pair in the body, " + k.name, "/api/property", with(map[string]string{"Authorization": wrongBasic}),
				body(k.name, formCreds(k.ct, "servicekey", "s_nosuchkey", "servicepass", "wrong")), false},
			hostileRequest{"read, wrong token, " + k.name, "/vros/api/default-config/owner_token/no-such-token-0123456789", ct,
				body(k.name, ""), true},
		)
	}
	// Many headers (within the 16 KiB limit) on a nested form.
	many := map[string]string{"Content-Type": form}
	for i := range 1200 {
		many[fmt.Sprintf("X-H%d", i)] = "1"
	}
	out = append(out,
		hostileRequest{"B, many headers, nested form", "/vros/external-booking", many, body("nested form", ""), true},
		hostileRequest{"A, many headers, nested form", "/api/property", many, body("nested form", ""), false})
	return out
}

// hostileAnswer checks one answer: a client error in its interface's envelope (interface B:
// HTTP 200 with an error status for its application errors, 413 and 429 as HTTP codes);
// it reports whether the answer was a 429.
func hostileAnswer(r hostileRequest, code int, body []byte) (throttled bool, problem string) {
	if r.b {
		var env struct {
			Status  *int   `json:"status"`
			Message string `json:"message"`
		}
		if err := json.Unmarshal(body, &env); err != nil || env.Status == nil || env.Message == "" {
			return false, fmt.Sprintf("HTTP %d, not interface B's envelope: %.200s", code, body)
		}
		switch {
		case code == http.StatusOK && (*env.Status == httpapi.StatusInvalid || *env.Status == httpapi.StatusUnauthorized):
		case code == http.StatusRequestEntityTooLarge && *env.Status == httpapi.StatusTooLarge:
		case code == http.StatusTooManyRequests && *env.Status == httpapi.StatusRateLimited:
		default:
			return false, fmt.Sprintf("HTTP %d status %d %q, want an error status on 200, or 413/429", code, *env.Status, env.Message)
		}
		return code == http.StatusTooManyRequests, ""
	}
	var env struct {
		Code      int    `json:"code"`
		ErrorType string `json:"error_type"`
		Message   string `json:"error_message"`
	}
	if err := json.Unmarshal(body, &env); err != nil || env.Code != code || env.ErrorType == "" || env.Message == "" {
		return false, fmt.Sprintf("HTTP %d, not interface A's envelope: %.200s", code, body)
	}
	if code < 400 || code >= 500 {
		return false, fmt.Sprintf("HTTP %d %s %q, want a 4xx", code, env.ErrorType, env.Message)
	}
	return code == http.StatusTooManyRequests, ""
}

// burst sends each request 16 times, 16 at a time, and returns how many answers were 429s.
func burst(t *testing.T, e *testEdge, reqs []hostileRequest) (sent, throttled int) {
	t.Helper()
	const clients = 16
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
	defer client.CloseIdleConnections()
	work := make(chan hostileRequest)
	var wg sync.WaitGroup
	var n429, total atomic.Int64
	var mu sync.Mutex
	problems := map[string]string{}
	for range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range work {
				req, err := http.NewRequest(http.MethodPost, e.url+r.path, strings.NewReader(r.body))
				if err != nil {
					panic(err)
				}
				for k, v := range r.header {
					req.Header.Set(k, v)
				}
				resp, err := client.Do(req)
				if err != nil {
					mu.Lock()
					problems[r.name] = err.Error()
					mu.Unlock()
					continue
				}
				b, _ := io.ReadAll(resp.Body)
				resp.Body.Close()
				total.Add(1)
				is429, problem := hostileAnswer(r, resp.StatusCode, b)
				if is429 {
					n429.Add(1)
				}
				if problem != "" {
					mu.Lock()
					problems[r.name] = problem
					mu.Unlock()
				}
			}
		}()
	}
	for _, r := range reqs {
		for range clients {
			work <- r
		}
	}
	close(work)
	wg.Wait()
	for name, p := range problems {
		t.Errorf("%s: %s", name, p)
	}
	return int(total.Load()), int(n429.Load())
}

// hostileChild names the variable with which TestHostileBodiesBounded/memory runs its burst
// in a process of its own.
const hostileChild = "VROS_TEST_HOSTILE_MEMORY_CHILD"

// heapObjects is the bytes of the heap's objects (live, and dead ones not yet swept).
func heapObjects() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/objects:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestHostileBodiesBounded: hostile bodies of about 1 MiB — nested PHP forms, many flat
// pairs, deep JSON, many multipart parts, many headers — sent 16 at a time without
// credentials or with wrong ones, to interface B, interface A and an owner-token read, cost
// edge little memory: the heap grows by less than 64 MiB over its size before the burst,
// of which fasthttp's 16 request bodies in flight are 16 MiB (edge reads the credentials
// before any body and parses none of an unauthenticated caller). Every answer is a client
// error in its interface's envelope, and every one counts as a failed authentication of the
// address: after its burst of failures the address is answered 429.
func TestHostileBodiesBounded(t *testing.T) {
	reqs := hostileRequests()
	const budget = 64 << 20

	t.Run("memory", func(t *testing.T) {
		// The heap is the process's: the edges and servers the package's earlier tests leave
		// to the collector (about 65 MiB of them, live until their goroutines wind down)
		// would count, and their work during the burst with them. So the burst runs in a
		// process of its own: this test binary again, running this subtest alone.
		if os.Getenv(hostileChild) == "" {
			cmd := exec.Command(os.Args[0], "-test.run=^TestHostileBodiesBounded$/^memory$", "-test.v", "-test.count=1")
			cmd.Env = append(os.Environ(), hostileChild+"=1")
			out, err := cmd.CombinedOutput()
			for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
				if strings.Contains(line, "hostile_test.go") {
					t.Log(strings.TrimSpace(line))
				}
			}
			if err != nil {
				t.Fatalf("the burst in its own process failed: %v\n%s", err, out)
			}
			return
		}
		// Failures are not throttled here: every body reaches edge's handlers.
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30})
		// A low GC target, so that the heap measures what is live rather than garbage
		// waiting for a collection: the heap's size is then close to its live bytes.
		defer debug.SetGCPercent(debug.SetGCPercent(10))
		runtime.GC()
		base := heapObjects()
		var peak atomic.Uint64
		stop, done := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(done)
			for {
				if h := heapObjects(); h > peak.Load() {
					peak.Store(h)
				}
				select {
				case <-stop:
					return
				default:
					runtime.Gosched()
				}
			}
		}()
		sent, throttled := burst(t, e, reqs)
		close(stop)
		<-done
		growth := int64(peak.Load()) - int64(base)
		t.Logf("%d hostile requests, 16 at a time: heap %d MiB before, peak %d MiB (growth %d MiB, budget %d MiB)",
			sent, base>>20, peak.Load()>>20, growth>>20, budget>>20)
		if throttled != 0 {
			t.Errorf("%d answers were 429 with failures not throttled", throttled)
		}
		if growth >= budget {
			t.Errorf("the heap grew by %d MiB during the burst, want under %d MiB", growth>>20, budget>>20)
		}
	})

	t.Run("throttled", func(t *testing.T) {
		const failures = 20
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 0.0001, AuthFailureBurst: failures})
		// The reads' bodies are over their route's 64 KiB: those are answered 413 whatever
		// the throttle says (docs/limits.md, "Plans"), and are not sent here.
		var within []hostileRequest
		for _, r := range reqs {
			if !strings.HasPrefix(r.path, "/vros/api/") {
				within = append(within, r)
			}
		}
		sent, throttled := burst(t, e, within)
		// 16 requests in flight may each pass the throttle before the failures of the
		// others are counted.
		if allowed := sent - throttled; allowed > failures+16 {
			t.Errorf("%d of %d hostile requests were answered without 429, want at most %d (the burst of %d failures, and 16 in flight)",
				allowed, sent, failures+16, failures)
		}
		t.Logf("%d hostile requests, %d answered 429", sent, throttled)
	})
}

// sampleHeap samples the heap's objects until the returned stop is called, which returns
// the peak; over, when set, is called once the heap has grown by more than limit over
// base (the caller then stops waiting for edge).
func sampleHeap(base, limit uint64, over func()) (stop func() uint64) {
	var peak atomic.Uint64
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		fired := false
		for {
			h := heapObjects()
			if h > peak.Load() {
				peak.Store(h)
			}
			if !fired && over != nil && h > base+limit {
				fired = true
				over()
			}
			select {
			case <-quit:
				return
			default:
				runtime.Gosched()
			}
		}
	}()
	return func() uint64 {
		close(quit)
		<-done
		return peak.Load()
	}
}

// compressed is plain's prefix followed by n bytes of 'a', compressed with coding (gzip,
// deflate or br): from a few hundred KiB to 1 MiB that decode to about n bytes.
func compressed(t testing.TB, coding, prefix string, n int) []byte {
	t.Helper()
	chunk := bytes.Repeat([]byte("a"), 1<<20)
	var b bytes.Buffer
	var w io.WriteCloser
	switch coding {
	case "gzip":
		w, _ = gzip.NewWriterLevel(&b, gzip.BestCompression)
	case "deflate":
		w, _ = zlib.NewWriterLevel(&b, zlib.BestSpeed)
	case "br":
		w = brotli.NewWriterLevel(&b, 1)
	default:
		t.Fatalf("no coding %q", coding)
	}
	_, _ = w.Write([]byte(prefix))
	for left := n; left > 0; left -= len(chunk) {
		_, _ = w.Write(chunk[:min(left, len(chunk))])
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// TestCompressedBodiesBounded: a compressed body is decoded by edge before any route, at
// most MaxBody once decoded. Bombs — about 1 MiB of gzip or deflate that decode to some
// 1 GiB — sent 4 at a time without credentials or with wrong ones, to interface B,
// interface A and an owner-token read, are each answered 413 "once decoded" in the
// interface's envelope (br ones 415: edge does not decode br), and the heap grows by less
// than TestHostileBodiesBounded's 64 MiB. An unknown coding is 415 naming
// Content-Encoding; a compressed body within the limit is read as the plain one would be
// (the credentials in it, the admin API's JSON).
func TestCompressedBodiesBounded(t *testing.T) {
	const decoded = 1 << 30
	wrongB := `{"key":"k_nosuchkey","pass":"wrong","action":"gettax","a":"`
	wrongA := `{"servicekey":"s_nosuchkey","servicepass":"wrong","a":"`
	wrongBasic := "Basic " + base64.StdEncoding.EncodeToString([]byte("a_nosuchuser:wrong-password"))

	t.Run("bombs", func(t *testing.T) {
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30})
		type bomb struct {
			name, path string
			header     map[string]string
			body       []byte
			b          bool
		}
		var bombs []bomb
		codings := []string{"gzip", "deflate", "br"}
		// Each bomb is a gigabyte to compress: all nine at once, on every core.
		var built [3][3][]byte
		var building sync.WaitGroup
		for i, coding := range codings {
			for j, prefix := range []string{wrongB, wrongA, ""} {
				building.Go(func() { built[i][j] = compressed(t, coding, prefix, decoded) })
			}
		}
		building.Wait()
		for i, coding := range codings {
			h := func(kv ...string) map[string]string {
				m := map[string]string{"Content-Encoding": coding, "Content-Type": "application/json"}
				for i := 0; i+1 < len(kv); i += 2 {
					m[kv[i]] = kv[i+1]
				}
				return m
			}
			withB, withA, none := built[i][0], built[i][1], built[i][2]
			t.Logf("%s: %d KiB compressed, %d MiB decoded", coding, len(none)>>10, decoded>>20)
			bombs = append(bombs,
				bomb{coding + ", B, wrong key/pass", "/vros/external-booking", h(), withB, true},
				bomb{coding + ", B, no credentials", "/vros/external-booking", h(), none, true},
				bomb{coding + ", A, no credentials", "/api/property", h(), withA, false},
				bomb{coding + ", A, wrong Basic", "/api/property", h("Authorization", wrongBasic), withA, false},
				bomb{coding + ", read, wrong token", "/vros/api/default-config/owner_token/no-such-token-0123456789", h(), none, true},
			)
		}
		defer debug.SetGCPercent(debug.SetGCPercent(10))
		runtime.GC()
		const budget = 64 << 20
		base := heapObjects()
		stop := sampleHeap(base, budget, nil)

		const clients = 4
		client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: clients, DisableCompression: true}}
		defer client.CloseIdleConnections()
		work := make(chan bomb)
		var wg sync.WaitGroup
		var mu sync.Mutex
		problems := map[string]string{}
		for range clients {
			wg.Go(func() {
				for r := range work {
					problem := func() string {
						req, err := http.NewRequest(http.MethodPost, e.url+r.path, bytes.NewReader(r.body))
						if err != nil {
							return err.Error()
						}
						for k, v := range r.header {
							req.Header.Set(k, v)
						}
						resp, err := client.Do(req)
						if err != nil {
							return err.Error()
						}
						b, _ := io.ReadAll(resp.Body)
						resp.Body.Close()
						if r.header["Content-Encoding"] == "br" {
							// Refused before decoding (brotli's window is the sender's
							// choice, up to 16 MiB).
							if resp.StatusCode != http.StatusUnsupportedMediaType || !bytes.Contains(b, []byte("Content-Encoding")) {
								return fmt.Sprintf("HTTP %d, want 415 naming Content-Encoding: %.300s", resp.StatusCode, b)
							}
							return ""
						}
						if resp.StatusCode != http.StatusRequestEntityTooLarge {
							return fmt.Sprintf("HTTP %d, want 413: %.300s", resp.StatusCode, b)
						}
						if _, p := hostileAnswer(hostileRequest{name: r.name, b: r.b}, resp.StatusCode, b); p != "" {
							return p
						}
						if !bytes.Contains(b, []byte("once decoded")) {
							return fmt.Sprintf("message does not say the limit holds once decoded: %.300s", b)
						}
						return ""
					}()
					if problem != "" {
						mu.Lock()
						problems[r.name] = problem
						mu.Unlock()
					}
				}
			})
		}
		for _, r := range bombs {
			work <- r
		}
		close(work)
		wg.Wait()
		peak := stop()
		for name, p := range problems {
			t.Errorf("%s: %s", name, p)
		}
		growth := int64(peak) - int64(base)
		t.Logf("%d bombs, %d at a time: heap %d MiB before, peak %d MiB (growth %d MiB, budget %d MiB)",
			len(bombs), clients, base>>20, peak>>20, growth>>20, budget>>20)
		if growth >= budget {
			t.Errorf("the heap grew by %d MiB during the bombs, want under %d MiB", growth>>20, budget>>20)
		}
	})

	t.Run("codings", func(t *testing.T) {
		e := start(t, Config{PublicURL: "https://api.example.com"})
		acc := decodeIssued(t, e.admin(t, http.MethodPost, "/accounts", `{"name":"Owner"}`))
		zipped := func(coding, body string) string {
			return string(compressed(t, coding, body, 0))
		}
		// Bare deflate (no zlib wrapper), as some clients send it.
		var bare bytes.Buffer
		fw, _ := flate.NewWriter(&bare, flate.BestSpeed)
		_, _ = fw.Write(fmt.Appendf(nil, `{"key":%q,"pass":%q,"action":"gettax"}`, acc.Key, acc.Pass))
		_ = fw.Close()
		gzTwice := func(body string) string {
			return string(compressed(t, "gzip", zipped("gzip", body), 0))
		}
		rightB := fmt.Sprintf(`{"key":%q,"pass":%q,"action":"gettax"}`, acc.Key, acc.Pass)
		rows := []struct {
			name, path, coding, body string
			want                     int
			b                        bool
			says                     string
		}{
			{"gzip: B credentials read from the decoded body (booking-svc not deployed: 503)", "/vros/external-booking", "gzip", zipped("gzip", rightB), 503, true, "not deployed"},
			{"deflate: the same", "/vros/external-booking", "deflate", zipped("deflate", rightB), 503, true, "not deployed"},
			{"bare deflate: the same", "/vros/external-booking", "deflate", bare.String(), 503, true, "not deployed"},
			{"br: 415 naming Content-Encoding", "/vros/external-booking", "br", zipped("br", rightB), 415, true, "Content-Encoding"},
			{"gzip, gzip: both undone", "/vros/external-booking", "gzip, gzip", gzTwice(rightB), 503, true, "not deployed"},
			{"gzip: wrong credentials in it refused", "/vros/external-booking", "GZIP", zipped("gzip", `{"key":"k_x","pass":"y"}`), 200, true, "invalid credentials"},
			{"zstd: 415 naming Content-Encoding (B: before routing, status 4 on 415)", "/vros/external-booking", "zstd", "(zstd)", 415, true, "Content-Encoding"},
			{"zstd: 415 naming Content-Encoding (A)", "/api/property", "zstd", "(zstd)", 415, false, "Content-Encoding"},
			{"gzip, but not gzip: 400", "/api/property", "gzip", "not gzip", 400, false, "gzip"},
			{"four codings: 415", "/api/property", "gzip, gzip, gzip, gzip", "x", 415, false, "at most 3"},
		}
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				a := e.send(t, http.MethodPost, r.path, map[string]string{"Content-Encoding": r.coding, "Content-Type": "application/json"}, r.body)
				if a.code != r.want {
					t.Fatalf("HTTP %d, want %d: %s", a.code, r.want, a.body)
				}
				var msg string
				if r.b {
					_, msg = bStatus(t, a)
				} else {
					_, msg = aError(t, a)
				}
				if !strings.Contains(msg, r.says) {
					t.Errorf("message %q does not say %q", msg, r.says)
				}
			})
		}
		t.Run("admin API reads a gzip JSON body", func(t *testing.T) {
			a := e.admin(t, http.MethodPost, "/accounts", zipped("gzip", `{"name":"Zipped Owner"}`), "Content-Encoding", "gzip")
			if a.code != http.StatusCreated {
				t.Fatalf("HTTP %d, want 201: %s", a.code, a.body)
			}
			if !strings.Contains(string(a.body), "Zipped Owner") {
				t.Errorf("the account's name is not the one sent: %s", a.body)
			}
		})
	})
}

// heldRequest is a request on its own connection whose body is sent only in part: the
// headers and the first 8 KiB (what fasthttp reads before any handler), the rest when the
// test releases it. Its answer arrives on answers.
type heldRequest struct {
	conn    net.Conn
	rest    []byte
	answers chan heldAnswer
}

type heldAnswer struct {
	code       int
	body       []byte
	retryAfter string
	err        error
}

func holdRequest(t *testing.T, e *testEdge, path, forwardedFor string, body []byte) *heldRequest {
	t.Helper()
	conn, err := net.Dial("tcp", strings.TrimPrefix(e.url, "http://"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: api.example.com\r\nX-Forwarded-For: %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n",
		path, forwardedFor, len(body))
	first := min(8<<10, len(body))
	if _, err := conn.Write(append([]byte(head), body[:first]...)); err != nil {
		t.Fatal(err)
	}
	h := &heldRequest{conn: conn, rest: body[first:], answers: make(chan heldAnswer, 1)}
	go func() {
		resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
		if err != nil {
			h.answers <- heldAnswer{err: err}
			return
		}
		b, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		h.answers <- heldAnswer{code: resp.StatusCode, body: b, retryAfter: resp.Header.Get("Retry-After"), err: err}
	}()
	return h
}

// release sends the rest of the body.
func (h *heldRequest) release() error {
	_, err := h.conn.Write(h.rest)
	return err
}

// TestBodyBudget: edge holds at most its body budget (VROS_EDGE_BODY_MEMORY_MIB, 64 MiB by
// default) of request bodies at once, however many arrive, before any credential is read:
// 16 bodies of 25 MiB (the largest edge reads) without credentials, from 16 addresses, all
// in flight at once and held by their clients, grow the heap by at most the budget and a
// margin; the 2 that fit are read, the 14 others are refused 503 with Retry-After in the
// interface's envelope once they have waited 1 s; once the clients send the rest, the 2 are
// answered (401: no credentials) and the budget is whole again. One address takes at most
// 2 such bodies (of a larger budget), a body declared or sent (chunked) over 25 MiB is 413.
func TestBodyBudget(t *testing.T) {
	const maxBody = 25 << 20
	body := append(append([]byte(`{"a":"`), bytes.Repeat([]byte("a"), maxBody-8)...), `"}`...)
	const photo = "/api/property-photo"

	t.Run("per replica", func(t *testing.T) {
		var intake *gateway.Intake
		e := start(t, Config{PublicURL: "https://api.example.com", TrustedProxies: []string{"127.0.0.1"},
			AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30, onIntake: func(in *gateway.Intake) { intake = in }})
		const n, budget, margin = 16, 64 << 20, 16 << 20
		const fit = budget / maxBody
		defer debug.SetGCPercent(debug.SetGCPercent(10))
		runtime.GC()
		base := heapObjects()
		over := make(chan struct{})
		stop := sampleHeap(base, budget+margin, func() { close(over) })
		held := make([]*heldRequest, n)
		for i := range held {
			held[i] = holdRequest(t, e, photo, fmt.Sprintf("198.51.100.%d", i+1), body)
		}
		// The ones that do not fit are answered while the others are still held.
		answered := map[int]heldAnswer{}
		cases := make([]reflect.SelectCase, 0, n+1)
		for _, h := range held {
			cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(h.answers)})
		}
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(over)})
		timeout := time.After(2 * time.Minute) // a hang, not a speed: the refusals come after 1 s
		for len(answered) < n-fit {
			i, v, _ := reflect.Select(append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(timeout)}))
			switch {
			case i == n:
				peak := stop()
				t.Fatalf("the heap grew by %d MiB with %d bodies of 25 MiB in flight (%d answered), over the budget of %d MiB and %d MiB margin",
					(peak-base)>>20, n, len(answered), budget>>20, margin>>20)
			case i == n+1:
				t.Fatalf("only %d of %d requests answered while the others are held", len(answered), n-fit)
			}
			answered[i] = v.Interface().(heldAnswer)
			cases[i].Chan = reflect.ValueOf(nil) // answered once
		}
		peak := stop()
		growth := int64(peak) - int64(base)
		t.Logf("%d bodies of 25 MiB in flight: heap %d MiB before, peak %d MiB (growth %d MiB, budget %d MiB + %d MiB margin)",
			n, base>>20, peak>>20, growth>>20, budget>>20, margin>>20)
		if growth > budget+margin {
			t.Errorf("the heap grew by %d MiB, want at most %d MiB", growth>>20, (budget+margin)>>20)
		}
		for i, a := range answered {
			if a.err != nil {
				t.Errorf("request %d: %v", i, a.err)
				continue
			}
			checkBusy(t, a)
		}
		// The rest of the budget taken by one more body: a body of at most 8 KiB (read whole
		// with the headers) is still read at once, a larger one refused.
		rest := append(append([]byte(`{"a":"`), bytes.Repeat([]byte("a"), budget-fit*maxBody-8)...), `"}`...)
		waitHeld(t, intake, fit*maxBody)
		filler := holdRequest(t, e, photo, "198.51.100.200", rest)
		waitHeld(t, intake, budget)
		small := e.send(t, http.MethodPost, "/vros/external-booking", map[string]string{"Content-Type": "application/json"},
			`{"action":"gettax","a":"`+strings.Repeat("a", 8<<10-32)+`"}`)
		if st, msg := bStatus(t, small); small.code != http.StatusOK || st != httpapi.StatusUnauthorized {
			t.Errorf("a body of 8 KiB with the budget spent: HTTP %d status %d %q, want 200 status 2", small.code, st, msg)
		}
		larger := holdRequest(t, e, photo, "198.51.100.201", body[:8<<10+1])
		checkBusy(t, <-larger.answers)
		held = append(held, filler)
		for i, h := range held {
			if _, ok := answered[i]; ok {
				continue
			}
			if err := h.release(); err != nil {
				t.Fatalf("send the rest of request %d: %v", i, err)
			}
			a := <-h.answers
			if a.err != nil || a.code != http.StatusUnauthorized {
				t.Errorf("request %d, once sent: HTTP %d %v, want 401: %.300s", i, a.code, a.err, a.body)
			}
		}
		// The budget is whole again: 2 bodies at once are read.
		again := make([]*heldRequest, fit)
		for i := range again {
			again[i] = holdRequest(t, e, photo, fmt.Sprintf("203.0.113.%d", i+1), body)
		}
		for _, h := range again {
			if err := h.release(); err != nil {
				t.Fatalf("send: %v", err)
			}
		}
		for _, h := range again {
			if a := <-h.answers; a.err != nil || a.code != http.StatusUnauthorized {
				t.Errorf("after the burst: HTTP %d %v, want 401: %.300s", a.code, a.err, a.body)
			}
		}
	})

	t.Run("per address", func(t *testing.T) {
		e := start(t, Config{PublicURL: "https://api.example.com", TrustedProxies: []string{"127.0.0.1"},
			AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30, BodyMemoryMiB: 256})
		held := []*heldRequest{
			holdRequest(t, e, photo, "192.0.2.1", body), holdRequest(t, e, photo, "192.0.2.1", body),
			holdRequest(t, e, photo, "192.0.2.1", body), holdRequest(t, e, photo, "192.0.2.2", body),
		}
		// Three of one address: one is refused; the other address's is read.
		var refused []int
		for len(refused) == 0 {
			select {
			case a := <-held[0].answers:
				refused, held[0].answers = append(refused, 0), nil
				checkBusy(t, a)
			case a := <-held[1].answers:
				refused, held[1].answers = append(refused, 1), nil
				checkBusy(t, a)
			case a := <-held[2].answers:
				refused, held[2].answers = append(refused, 2), nil
				checkBusy(t, a)
			case a := <-held[3].answers:
				t.Fatalf("the other address's request was answered before its body was sent: HTTP %d %v %.300s", a.code, a.err, a.body)
			case <-time.After(2 * time.Minute): // a hang, not a speed: the refusal comes after 1 s
				t.Fatal("no request of the address refused while three are in flight")
			}
		}
		for i, h := range held {
			if h.answers == nil {
				continue
			}
			if err := h.release(); err != nil {
				t.Fatalf("send the rest of request %d: %v", i, err)
			}
			if a := <-h.answers; a.err != nil || a.code != http.StatusUnauthorized {
				t.Errorf("request %d, once sent: HTTP %d %v, want 401: %.300s", i, a.code, a.err, a.body)
			}
		}
	})

	t.Run("over 25 MiB", func(t *testing.T) {
		e := start(t, Config{PublicURL: "https://api.example.com", AuthFailureRPS: 1000, AuthFailureBurst: 1 << 30})
		chunked := func(size int) string {
			var b strings.Builder
			b.WriteString("POST " + photo + " HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n")
			const chunk = 1 << 20
			for left := size; left > 0; left -= chunk {
				n := min(left, chunk)
				fmt.Fprintf(&b, "%x\r\n%s\r\n", n, strings.Repeat("a", n))
			}
			b.WriteString("0\r\n\r\n")
			return b.String()
		}
		rows := []struct {
			name, request string
			want          int
		}{
			// fasthttp reads the first 8 KiB (and a byte, to tell the body is longer) before
			// any handler; edge then refuses the body without reading the rest.
			{"declared over 25 MiB: 413 before reading it", fmt.Sprintf("POST %s HTTP/1.1\r\nHost: api.example.com\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s",
				photo, maxBody+1, strings.Repeat("a", 8<<10+1)), 413},
			{"chunked over 25 MiB: 413", chunked(maxBody + 1), 413},
			{"chunked of 25 MiB: read (401: no credentials)", chunked(maxBody), 401},
			{"chunked, small: read (401)", chunked(10), 401},
		}
		for _, r := range rows {
			t.Run(r.name, func(t *testing.T) {
				a := e.raw(t, r.request)
				if a.code != r.want {
					t.Fatalf("HTTP %d, want %d: %.300s", a.code, r.want, a.body)
				}
				typ, msg := aError(t, a)
				if r.want == 413 && (typ != "payload_too_large" || !strings.Contains(msg, "26214400")) {
					t.Errorf("error_type %q, message %q: want payload_too_large naming 26214400 bytes", typ, msg)
				}
			})
		}
	})
}

// waitHeld waits until the intake holds want bytes of its budget.
func waitHeld(t *testing.T, in *gateway.Intake, want int64) {
	t.Helper()
	hang := time.After(2 * time.Minute) // a hang, not a speed
	for in.Held() != want {
		select {
		case <-hang:
			t.Fatalf("the intake holds %d bytes, want %d", in.Held(), want)
		default:
			runtime.Gosched()
		}
	}
}

// checkBusy checks a refusal of the body budget: 503 with Retry-After in interface A's
// envelope.
func checkBusy(t *testing.T, a heldAnswer) {
	t.Helper()
	if a.err != nil {
		t.Errorf("refused request: %v", a.err)
		return
	}
	typ, msg := aError(t, answer{code: a.code, body: a.body})
	if a.code != http.StatusServiceUnavailable || typ != "unavailable" || a.retryAfter == "" || !strings.Contains(msg, "too many request bodies") {
		t.Errorf("HTTP %d %s %q, Retry-After %q: want 503 unavailable with Retry-After", a.code, typ, msg, a.retryAfter)
	}
}
