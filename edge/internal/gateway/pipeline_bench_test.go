package gateway_test

import (
	"context"
	"encoding/base64"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/vros/vros/edge/internal/account"
	"github.com/vros/vros/edge/internal/gateway"
	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/telemetry"
	"github.com/vros/vros/libs/tenancy"
)

// BenchmarkPipeline serves one authenticated request of each interface through edge's
// whole pipeline, in process (the app's handler on a reused fasthttp.RequestCtx), forwarded
// to a stub service: its allocs/op are edge's hot path plus the stub's (the same in every
// run), so a change of the pipeline shows as a change of allocs/op.
func BenchmarkPipeline(b *testing.B) {
	stub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		_, _ = io.WriteString(w, `{"status":0,"message":"Success","data":{}}`)
	}))
	b.Cleanup(stub.Close)
	tel, err := telemetry.Setup(context.Background(), "edge-bench", "error")
	if err != nil {
		b.Fatal(err)
	}
	tel.Logger = slog.New(slog.NewJSONHandler(io.Discard, nil))
	urls := map[gateway.Upstream]string{}
	for _, name := range []gateway.Upstream{gateway.PropertySvc, gateway.BookingSvc, gateway.CatalogSvc, gateway.IntegrationSvc} {
		urls[name] = stub.URL
	}
	accounts := account.NewService(store, account.Options{CacheTTL: time.Hour})
	gw, err := gateway.New(gateway.Config{ServiceURLs: urls, RateLimitRPS: 1e9, RateLimitBurst: 1e9, AccountConcurrency: 32},
		accounts, tenancy.NewSigner(tenancy.CallerEdge, signingKey), tel.Propagator)
	if err != nil {
		b.Fatal(err)
	}
	app := httpapi.New(httpapi.Options{Telemetry: tel, BodyLimit: gateway.MaxBody, EnvelopeFor: gateway.EnvelopeFor})
	gw.Register(app)
	handler := app.Handler()

	_, secrets, err := accounts.Create(context.Background(), "bench", false)
	if err != nil {
		b.Fatal(err)
	}
	creds := map[account.Kind]account.Secret{}
	for _, s := range secrets {
		creds[s.Kind] = s
	}
	basic := "Basic " + base64.StdEncoding.EncodeToString([]byte(creds[account.Basic].Identifier+":"+creds[account.Basic].Secret))
	for _, tc := range []struct {
		name, path, ct, body string
		header               [][2]string
	}{
		{name: "A", path: "/api/property", ct: "application/json", body: `{"id":1,"name":"Villa"}`,
			header: [][2]string{{"Authorization", basic}, {"servicekey", creds[account.ServiceKey].Identifier}, {"servicepass", creds[account.ServiceKey].Secret}}},
		{name: "B", path: "/vros/external-booking", ct: "application/json",
			body: `{"key":"` + creds[account.Key].Identifier + `","pass":"` + creds[account.Key].Secret + `","action":"getinfo","id":1}`},
		{name: "B form", path: "/vros/external-booking", ct: "application/x-www-form-urlencoded",
			body: "key=" + creds[account.Key].Identifier + "&pass=" + creds[account.Key].Secret + "&action=getinfo&id=1"},
		{name: "read", path: "/vros/api/property-detail/owner_token/" + creds[account.OwnerToken].Secret + "/property/7"},
		{name: "media", path: "/media/0123456789abcdefghijklmn/h_179.jpg"},
		{name: "ical", path: "/ical/AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA.ics"},
	} {
		b.Run(tc.name, func(b *testing.B) {
			var req fasthttp.Request
			req.Header.SetMethod(fiberMethod(tc.body))
			req.SetRequestURI(tc.path)
			req.Header.SetHost("edge.test")
			if tc.ct != "" {
				req.Header.SetContentType(tc.ct)
			}
			for _, h := range tc.header {
				req.Header.Set(h[0], h[1])
			}
			req.SetBodyString(tc.body)
			var ctx fasthttp.RequestCtx
			ctx.Init(&req, &net.TCPAddr{IP: net.IPv4(192, 0, 2, 1), Port: 4000}, nil)
			serve := func() {
				ctx.Request.Reset()
				req.CopyTo(&ctx.Request)
				ctx.Response.Reset()
				ctx.ResetUserValues()
				handler(&ctx)
				if ctx.Response.StatusCode() != http.StatusOK {
					b.Fatalf("HTTP %d: %s", ctx.Response.StatusCode(), ctx.Response.Body())
				}
			}
			serve() // the credential is cached from here on
			b.ReportAllocs()
			b.ResetTimer()
			for range b.N {
				serve()
			}
		})
	}
}

func fiberMethod(body string) string {
	if body == "" {
		return http.MethodGet
	}
	return http.MethodPost
}
