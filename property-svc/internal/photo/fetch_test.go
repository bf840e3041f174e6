package photo

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"net/url"
	"strings"
	"testing"
	"time"
)

func newImageServer(t *testing.T, img []byte) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.HandleFunc("/ok.png", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(img)
	})
	mux.HandleFunc("/missing.png", func(w http.ResponseWriter, r *http.Request) {
		http.NotFound(w, r)
	})
	mux.HandleFunc("/error", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "boom", http.StatusBadGateway)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "2048")
		_, _ = w.Write(bytes.Repeat([]byte{'x'}, 2048))
	})
	mux.HandleFunc("/big-chunked", func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i < 4; i++ { // no Content-Length: 4 flushed chunks of 512
			_, _ = w.Write(bytes.Repeat([]byte{'x'}, 512))
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // chunked, exactly at the limit
		_, _ = w.Write(bytes.Repeat([]byte{'x'}, 1024))
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-time.After(2 * time.Second):
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/html", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>not an image</html>"))
	})
	// /redirect/N redirects N more times, then to /ok.png.
	mux.HandleFunc("/redirect/", func(w http.ResponseWriter, r *http.Request) {
		var n int
		_, _ = fmt.Sscanf(strings.TrimPrefix(r.URL.Path, "/redirect/"), "%d", &n)
		if n <= 0 {
			http.Redirect(w, r, "/ok.png", http.StatusFound)
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/redirect/%d", n-1), http.StatusFound)
	})
	// /to?u=URL redirects anywhere.
	mux.HandleFunc("/to", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("u"), http.StatusFound)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestFetch(t *testing.T) {
	img := encodePNG(t, gradient(40, 30))
	srv := newImageServer(t, img)
	other := newImageServer(t, img) // a second, "private" server

	open := NewFetcher(Config{AllowPrivate: true, Limits: Limits{MaxBytes: 1024 * 1024}})
	small := NewFetcher(Config{AllowPrivate: true, Limits: Limits{MaxBytes: 1024}})
	guarded := NewFetcher(Config{}) // production settings
	// pseudoPublic treats srv (only) as a public host; everything else,
	// including other on the same loopback IP, goes through the guard.
	srvAddr := netip.MustParseAddrPort(strings.TrimPrefix(srv.URL, "http://"))
	pseudoPublic := NewFetcher(Config{})
	pseudoPublic.testPublic = func(ap netip.AddrPort) bool { return ap == srvAddr }
	fast := NewFetcher(Config{AllowPrivate: true, Timeout: 200 * time.Millisecond})

	localhostURL := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		name string
		f    *Fetcher
		url  string
		want error
		msg  string
	}{
		{"ok", open, srv.URL + "/ok.png", nil, ""},
		{"404", open, srv.URL + "/missing.png", ErrFetch, "link could not be fetched: status 404"},
		{"502", open, srv.URL + "/error", ErrFetch, "status 502"},
		{"over limit with content-length", small, srv.URL + "/big", ErrTooLarge, "1 KiB limit"},
		{"over limit chunked", small, srv.URL + "/big-chunked", ErrTooLarge, "1 KiB limit"},
		{"exactly at limit", small, srv.URL + "/exact", nil, ""},
		{"timeout", fast, srv.URL + "/slow", ErrFetch, "timed out"},
		{"3 redirects ok", open, srv.URL + "/redirect/2", nil, ""}, // 2 + final hop to /ok.png
		{"4 redirects refused", open, srv.URL + "/redirect/3", ErrFetch, "more than 3 redirects"},
		{"redirect to file scheme", open, srv.URL + "/to?u=" + url.QueryEscape("file:///etc/passwd"), ErrFetch, ""},
		{"loopback refused", guarded, srv.URL + "/ok.png", ErrForbiddenAddress, "forbidden network address"},
		{"localhost name refused", guarded, localhostURL + "/ok.png", ErrForbiddenAddress, ""},
		{"link-local metadata refused", guarded, "http://169.254.169.254/latest/meta-data/", ErrForbiddenAddress, ""},
		{"unspecified refused", guarded, "http://0.0.0.0:1/x.png", ErrForbiddenAddress, ""},
		{"ipv6 loopback refused", guarded, "http://[::1]:1/x.png", ErrForbiddenAddress, ""},
		{"pseudo-public server ok", pseudoPublic, srv.URL + "/ok.png", nil, ""},
		{"pseudo-public redirect within ok", pseudoPublic, srv.URL + "/redirect/1", nil, ""},
		{"redirect to private refused", pseudoPublic, srv.URL + "/to?u=" + url.QueryEscape(other.URL+"/ok.png"), ErrForbiddenAddress, ""},
		{"redirect to localhost refused", pseudoPublic, srv.URL + "/to?u=" + url.QueryEscape(localhostURL+"/ok.png"), ErrForbiddenAddress, ""},
		{"non-http scheme", open, "ftp://example.com/a.png", ErrFetch, "only http and https"},
		{"no host", open, "http:///a.png", ErrFetch, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body, err := tc.f.Fetch(context.Background(), tc.url)
			wantKind(t, err, tc.want, tc.msg)
			if tc.want != nil {
				if body != nil {
					t.Fatalf("got %d bytes with an error", len(body))
				}
				return
			}
			if !tc.f.cfg.AllowPrivate && tc.f.testPublic == nil {
				t.Fatal("test setup: success case through the real guard")
			}
			if tc.name == "exactly at limit" {
				if len(body) != 1024 {
					t.Fatalf("len = %d", len(body))
				}
				return
			}
			if !bytes.Equal(body, img) {
				t.Fatalf("body mismatch: %d bytes", len(body))
			}
		})
	}
}

func TestFetchContextCancel(t *testing.T) {
	srv := newImageServer(t, nil)
	f := NewFetcher(Config{AllowPrivate: true})
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := f.Fetch(ctx, srv.URL+"/slow")
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("err = %v, want the context's error", err)
	}
	if _, ok := AsError(err); ok {
		t.Fatal("a cancelled request must not look like a client input error")
	}
}

func TestLoadLink(t *testing.T) {
	srv := newImageServer(t, encodePNG(t, gradient(40, 30)))
	f := NewFetcher(Config{AllowPrivate: true})
	img, err := Load(context.Background(), srv.URL+"/ok.png", f)
	if err != nil {
		t.Fatal(err)
	}
	if img.Bounds().Dx() != 40 || img.Bounds().Dy() != 30 {
		t.Fatalf("bounds %v", img.Bounds())
	}
	_, err = Load(context.Background(), srv.URL+"/html", f)
	wantKind(t, err, ErrNotImage)
	_, err = Load(context.Background(), srv.URL+"/missing.png", f)
	wantKind(t, err, ErrFetch, "status 404")
	// nil fetcher = production defaults: loopback refused.
	_, err = Load(context.Background(), srv.URL+"/ok.png", nil)
	wantKind(t, err, ErrForbiddenAddress)
}
