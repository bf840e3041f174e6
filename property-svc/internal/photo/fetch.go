package photo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/vros/vros/libs/egress"
)

// Defaults for Limits and Config; zero fields are replaced by these.
const (
	DefaultMaxBytes     = 15 << 20   // 15 MiB of encoded image data (download or base64 payload)
	DefaultMaxPixels    = 40_000_000 // 40 megapixels
	DefaultMinSide      = 16         // smallest accepted width and height
	DefaultTimeout      = 10 * time.Second
	DefaultMaxRedirects = 3
	DefaultMaxWait      = 15 * time.Second
)

// Limits bound the size of accepted images. Zero fields mean the default.
type Limits struct {
	MaxBytes  int64 // encoded bytes, applies to downloads and base64 payloads
	MaxPixels int64 // width*height as declared by the image header
	MinSide   int   // minimum width and minimum height
	// Memory is the bytes decoding and rendering may take in one process: all photos
	// processed at once together (Photos), and so one photo alone (Inspect's Need).
	Memory int64
}

func (l Limits) withDefaults() Limits {
	if l.MaxBytes <= 0 {
		l.MaxBytes = DefaultMaxBytes
	}
	if l.MaxPixels <= 0 {
		l.MaxPixels = DefaultMaxPixels
	}
	if l.MinSide <= 0 {
		l.MinSide = DefaultMinSide
	}
	if l.Memory <= 0 {
		l.Memory = DefaultMemory
	}
	return l
}

// Config configures a Fetcher. The zero value is a safe production config.
type Config struct {
	Limits
	Timeout      time.Duration // whole request including body; default 10s
	MaxRedirects int           // default 3; negative means no redirects at all
	// AllowPrivate disables the SSRF guard (loopback, private, link-local,
	// multicast, unspecified and other special-purpose addresses). Only for
	// tests and local development.
	AllowPrivate bool
	UserAgent    string // default "vros-photo-fetcher/1"
	// MaxWait is how long a photo waits for memory (Limits.Memory) that other photos hold
	// before it is refused with ErrBusy; default 15s, within edge's 30 s upstream timeout
	// with a link's 10 s download before it.
	MaxWait time.Duration
}

// Fetcher downloads linked images safely. It is safe for concurrent use;
// create one and share it.
type Fetcher struct {
	cfg    Config
	client *http.Client

	// testPublic, when set, treats matching dial addresses as public even
	// though they are not. Tests use it to have one "public" httptest server.
	testPublic func(netip.AddrPort) bool
}

// NewFetcher returns a Fetcher for cfg (zero fields take the defaults).
func NewFetcher(cfg Config) *Fetcher {
	cfg.Limits = cfg.Limits.withDefaults()
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRedirects == 0 {
		cfg.MaxRedirects = DefaultMaxRedirects
	}
	if cfg.MaxRedirects < 0 {
		cfg.MaxRedirects = 0
	}
	if cfg.MaxWait <= 0 {
		cfg.MaxWait = DefaultMaxWait
	}
	if cfg.UserAgent == "" {
		cfg.UserAgent = "vros-photo-fetcher/1"
	}
	f := &Fetcher{cfg: cfg}
	dialer := &net.Dialer{
		Timeout:   cfg.Timeout,
		KeepAlive: 30 * time.Second,
		// Control runs after DNS resolution for every connection attempt
		// (including each redirect hop and each Happy Eyeballs candidate),
		// so the check covers DNS rebinding and redirects to private hosts.
		Control: f.control,
	}
	transport := &http.Transport{
		// No proxy: with a proxy the proxy would resolve the target and
		// the dial-time guard would only ever see the proxy's address.
		Proxy:                  nil,
		DialContext:            dialer.DialContext,
		ForceAttemptHTTP2:      true,
		TLSHandshakeTimeout:    cfg.Timeout,
		ResponseHeaderTimeout:  cfg.Timeout,
		MaxResponseHeaderBytes: 64 << 10,
		DisableCompression:     true, // the byte limit is on what is on the wire
		MaxIdleConns:           16,
		IdleConnTimeout:        30 * time.Second,
	}
	f.client = &http.Client{
		Transport: transport,
		Timeout:   cfg.Timeout,
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > cfg.MaxRedirects {
				return newErr(ErrFetch, nil, "more than %d redirects", cfg.MaxRedirects)
			}
			if s := req.URL.Scheme; s != "http" && s != "https" {
				return newErr(ErrFetch, nil, "redirect to a non-http(s) link")
			}
			return nil
		},
	}
	return f
}

// Config returns the effective configuration (defaults filled in).
func (f *Fetcher) Config() Config { return f.cfg }

func (f *Fetcher) control(network, address string, c syscall.RawConn) error {
	return egress.Control(func(ap netip.AddrPort) bool {
		return f.cfg.AllowPrivate || (f.testPublic != nil && f.testPublic(ap))
	})(network, address, c)
}

// IsLink reports whether s (trimmed) looks like an http or https URL rather
// than base64 data.
func IsLink(s string) bool {
	s = strings.TrimSpace(s)
	return hasPrefixFold(s, "http://") || hasPrefixFold(s, "https://")
}

func hasPrefixFold(s, prefix string) bool {
	return len(s) >= len(prefix) && strings.EqualFold(s[:len(prefix)], prefix)
}

// Fetch downloads rawURL and returns the body. It fails with an *Error of
// kind ErrFetch (bad URL, network error, timeout, non-2xx status, too many
// redirects), ErrForbiddenAddress (SSRF guard) or ErrTooLarge (body larger
// than MaxBytes; the body is never silently truncated). If ctx itself is
// cancelled, ctx's error is returned as is.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) ([]byte, error) {
	u, err := url.Parse(strings.TrimSpace(rawURL))
	if err != nil {
		return nil, newErr(ErrFetch, err, "invalid link")
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, newErr(ErrFetch, nil, "only http and https links are accepted")
	}
	if u.Hostname() == "" {
		return nil, newErr(ErrFetch, nil, "link has no host")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, newErr(ErrFetch, err, "invalid link")
	}
	req.Header.Set("User-Agent", f.cfg.UserAgent)
	req.Header.Set("Accept", "image/jpeg, image/png, image/gif, image/webp, image/*;q=0.8")

	resp, err := f.client.Do(req)
	if err != nil {
		return nil, f.classify(ctx, err)
	}
	defer resp.Body.Close()

	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		// Drain a little so the connection can be reused; never much.
		_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10))
		return nil, newErr(ErrFetch, nil, "status %d", resp.StatusCode)
	}
	limit := f.cfg.MaxBytes
	if resp.ContentLength > limit {
		return nil, f.tooBig()
	}
	capHint := int64(64 << 10)
	if resp.ContentLength > 0 {
		capHint = resp.ContentLength + 1
	}
	buf := make([]byte, 0, capHint)
	body, err := readAllInto(buf, io.LimitReader(resp.Body, limit+1))
	if err != nil {
		return nil, f.classify(ctx, err)
	}
	if int64(len(body)) > limit {
		return nil, f.tooBig()
	}
	if len(body) == 0 {
		return nil, newErr(ErrFetch, nil, "empty response")
	}
	return body, nil
}

func (f *Fetcher) tooBig() error {
	return newErr(ErrTooLarge, nil, "link response exceeds the %s limit", formatBytes(f.cfg.MaxBytes))
}

func readAllInto(b []byte, r io.Reader) ([]byte, error) {
	for {
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)]
		}
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
	}
}

// classify turns a client error into an *Error (or ctx's own error).
func (f *Fetcher) classify(ctx context.Context, err error) error {
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	var pe *Error
	if errors.As(err, &pe) { // from CheckRedirect
		return pe
	}
	if errors.Is(err, egress.ErrForbidden) {
		return newErr(ErrForbiddenAddress, err, "")
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return newErr(ErrFetch, err, "timed out after %s", f.cfg.Timeout)
	}
	var dnsErr *net.DNSError
	if errors.As(err, &dnsErr) {
		return newErr(ErrFetch, err, "host not found")
	}
	return newErr(ErrFetch, err, "connection failed")
}

func formatBytes(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	default:
		return fmt.Sprintf("%d bytes", n)
	}
}
