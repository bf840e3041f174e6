package gateway

import (
	"fmt"
	"net/url"
	"strings"
	"time"

	"github.com/gofiber/fiber/v2"
	"github.com/valyala/fasthttp"
	"go.opentelemetry.io/otel/propagation"

	"github.com/vros/vros/libs/httpapi"
	"github.com/vros/vros/libs/tenancy"
)

// upstream is one service edge forwards to, over a pooled keep-alive client.
type upstream struct {
	name   Upstream
	client *fasthttp.HostClient
	signer *tenancy.Signer
	prop   propagation.TextMapPropagator
}

func newUpstream(name Upstream, rawURL string, signer *tenancy.Signer, prop propagation.TextMapPropagator) (*upstream, error) {
	u, err := url.Parse(rawURL)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("%s URL %q is not an http(s) URL", name, rawURL)
	}
	return &upstream{
		name: name,
		client: &fasthttp.HostClient{
			Addr:                u.Host,
			IsTLS:               u.Scheme == "https",
			MaxConns:            1024,
			ReadTimeout:         30 * time.Second,
			WriteTimeout:        30 * time.Second,
			MaxIdleConnDuration: 60 * time.Second,
			MaxResponseBodySize: MaxBody,
		},
		signer: signer,
		prop:   prop,
	}, nil
}

// forward sends method path with body to the service on behalf of account (signed; empty
// account for public routes) and copies the answer back to the client.
func (u *upstream) forward(c *fiber.Ctx, method, path string, body []byte, account string) error {
	req := fasthttp.AcquireRequest()
	resp := fasthttp.AcquireResponse()
	defer fasthttp.ReleaseRequest(req)
	defer fasthttp.ReleaseResponse(resp)

	req.Header.SetMethod(method)
	req.SetRequestURI(path)
	req.Header.SetHost(u.client.Addr)
	if body != nil {
		req.Header.SetContentType(fiber.MIMEApplicationJSON)
		req.SetBodyRaw(body)
	}
	req.Header.Set(httpapi.HeaderRequestID, httpapi.RequestID(c))
	for _, h := range forwardedHeaders {
		if v := c.Get(h); v != "" {
			req.Header.Set(h, v)
		}
	}
	if account != "" {
		// Sign the path without its query: the query is not part of the tenant's identity.
		p, _, _ := strings.Cut(path, "?")
		ts, sig := u.signer.Sign(account, method, p, time.Now())
		req.Header.Set(tenancy.HeaderAccount, account)
		req.Header.Set(tenancy.HeaderTime, ts)
		req.Header.Set(tenancy.HeaderSignature, sig)
	}
	u.prop.Inject(c.UserContext(), requestCarrier{&req.Header})

	if err := u.client.Do(req, resp); err != nil {
		return httpapi.Unavailable(fmt.Sprintf("%s is not reachable; retry later", u.name))
	}
	c.Status(resp.StatusCode())
	for _, h := range []string{fiber.HeaderContentType, fiber.HeaderCacheControl, fiber.HeaderETag, fiber.HeaderLastModified, "Idempotent-Replayed"} {
		if v := resp.Header.Peek(h); len(v) > 0 {
			c.Response().Header.SetBytesV(h, v)
		}
	}
	// Copy: resp goes back to fasthttp's pool when forward returns, while Fiber writes the
	// client's answer after that. Send would keep a reference to resp's buffer, which the
	// next forwarded request overwrites (another tenant's answer sent to this client).
	c.Response().SetBody(resp.Body())
	return nil
}

// forwardedHeaders are the client headers a service may need.
var forwardedHeaders = []string{fiber.HeaderIfNoneMatch, "Idempotency-Key"}

// requestCarrier injects trace context into an outgoing fasthttp request.
type requestCarrier struct{ h *fasthttp.RequestHeader }

func (r requestCarrier) Get(key string) string { return string(r.h.Peek(key)) }
func (r requestCarrier) Set(key, value string) { r.h.Set(key, value) }
func (r requestCarrier) Keys() []string        { return nil }
