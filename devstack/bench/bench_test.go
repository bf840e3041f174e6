// Package bench measures vros under load through its real entry points, beside a bare Fiber
// handler in the same run so that figures can be read as ratios on a noisy machine. Run with
// `make bench`; results are written up in docs/benchmarks.md.
package bench

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"

	"github.com/vros/vros/devstack/stack"
	"github.com/vros/vros/libs/seal"
	"github.com/vros/vros/libs/tenancy"
)

const hmacKey = "bench-hmac-key-0123456789"

var (
	st      *stack.Stack
	bareURL string
	creds   struct {
		AccountID     string `json:"account_id"`
		BasicUser     string `json:"basic_user"`
		BasicPassword string `json:"basic_password"`
		ServiceKey    string `json:"servicekey"`
		ServicePass   string `json:"servicepass"`
		Key           string `json:"key"`
		Pass          string `json:"pass"`
	}
)

func TestMain(m *testing.M) {
	ctx := context.Background()
	var err error
	st, err = stack.Start(ctx, stack.Options{HMACKey: hmacKey, EncryptionKey: seal.NewKey(), AdminToken: "bench-admin",
		LogLevel: "error", Log: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	bareURL = startBare()
	code, body := send("POST", st.EdgeURL+"/admin/v1/accounts", map[string]string{"Authorization": "Bearer bench-admin"}, []byte(`{}`))
	var out struct {
		Data json.RawMessage `json:"data"`
	}
	if code != 201 || json.Unmarshal(body, &out) != nil || json.Unmarshal(out.Data, &creds) != nil {
		fmt.Fprintln(os.Stderr, "account:", code, string(body))
		os.Exit(1)
	}
	if code, body := send("POST", st.EdgeURL+"/api/property", aHeaders(), []byte(`{"action":"create","property":`+property+`}`)); code != 200 {
		fmt.Fprintln(os.Stderr, "property:", code, string(body))
		os.Exit(1)
	}
	rc := m.Run()
	_ = st.Close()
	os.Exit(rc)
}

const property = `{"internal_code":"BENCH1","name":"Seaside Villa with Garden","type":"Villa","maxguest":6,"bedrooms":3,` +
	`"bathrooms":2,"kitchens":1,"floor":"Ground","space":{"value":140,"unit":"meters"},"address":"1 Ocean Drive",` +
	`"city":"Miami Beach","state":"FL","postcode":"33139","country":"US","latitude":25.79,"longitude":-80.13}`

var update = []byte(`{"action":"update","property":` + property + `}`)

// startBare serves the same request shape with a Fiber handler that only decodes the JSON
// and answers like interface A: the floor under which no service of ours can go.
func startBare() string {
	app := fiber.New(fiber.Config{DisableStartupMessage: true})
	app.Post("/vros/external-booking", func(c *fiber.Ctx) error {
		var v map[string]any
		if err := json.Unmarshal(c.Body(), &v); err != nil {
			return c.Status(400).JSON(fiber.Map{"status": 4})
		}
		return c.JSON(fiber.Map{"status": 0, "message": "Success", "data": fiber.Map{"grandTotal": 700}})
	})
	app.Post("/api/property", func(c *fiber.Ctx) error {
		var v map[string]any
		if err := json.Unmarshal(c.Body(), &v); err != nil {
			return c.Status(400).JSON(fiber.Map{"code": 400})
		}
		return c.JSON(fiber.Map{"code": 200, "data": fiber.Map{"property_id": "1"}})
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	go func() { _ = app.Listener(ln) }()
	return "http://" + ln.Addr().String()
}

func aHeaders() map[string]string {
	return map[string]string{
		"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte(creds.BasicUser+":"+creds.BasicPassword)),
		"servicekey":    creds.ServiceKey, "servicepass": creds.ServicePass, "Content-Type": "application/json",
	}
}

// directHeaders are what edge would send property-svc: the signed tenant context.
func directHeaders() map[string]string {
	ts, sig := tenancy.NewSigner(hmacKey).Sign(creds.AccountID, "POST", "/internal/a/property", time.Now())
	return map[string]string{tenancy.HeaderAccount: creds.AccountID, tenancy.HeaderTime: ts, tenancy.HeaderSignature: sig,
		"Content-Type": "application/json"}
}

var client = &fasthttp.Client{MaxConnsPerHost: 512, ReadTimeout: 30 * time.Second}

func send(method, url string, headers map[string]string, body []byte) (int, []byte) {
	req, resp := fasthttp.AcquireRequest(), fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)
	req.Header.SetMethod(method)
	req.SetRequestURI(url)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	req.SetBody(body)
	if err := client.Do(req, resp); err != nil {
		return 0, []byte(err.Error())
	}
	return resp.StatusCode(), append([]byte(nil), resp.Body()...)
}

// load runs the request from parallel workers for b.N requests in all and reports
// requests/s and latency percentiles.
func load(b *testing.B, url string, headers func() map[string]string, body []byte) {
	loadBodies(b, url, headers, func() []byte { return body })
}

// loadBodies is load with a body per request.
func loadBodies(b *testing.B, url string, headers func() map[string]string, body func() []byte) {
	var mu sync.Mutex
	var all []time.Duration
	b.SetParallelism(8) // 8 × GOMAXPROCS concurrent clients
	b.ResetTimer()
	start := time.Now()
	b.RunParallel(func(pb *testing.PB) {
		h := headers()
		var mine []time.Duration
		for pb.Next() {
			req := body()
			t0 := time.Now()
			code, resp := send("POST", url, h, req)
			mine = append(mine, time.Since(t0))
			if code != 200 {
				b.Errorf("HTTP %d: %s", code, resp)
				return
			}
		}
		mu.Lock()
		all = append(all, mine...)
		mu.Unlock()
	})
	elapsed := time.Since(start)
	b.StopTimer()
	if len(all) == 0 {
		return
	}
	slices.Sort(all)
	pct := func(p float64) float64 { return float64(all[int(p*float64(len(all)-1))].Microseconds()) / 1000 }
	b.ReportMetric(float64(len(all))/elapsed.Seconds(), "req/s")
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}

// BenchmarkPropertyUpdate: an interface A property update through edge, straight to
// property-svc, and against the bare Fiber baseline.
func BenchmarkPropertyUpdate(b *testing.B) {
	b.Run("bare-fiber", func(b *testing.B) { load(b, bareURL+"/api/property", aHeaders, update) })
	b.Run("property-svc", func(b *testing.B) { load(b, st.PropertyURL+"/internal/a/property", directHeaders, update) })
	b.Run("edge", func(b *testing.B) { load(b, st.EdgeURL+"/api/property", aHeaders, update) })
}
