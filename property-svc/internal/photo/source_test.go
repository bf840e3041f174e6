package photo

import (
	"bytes"
	"context"
	"encoding/base64"
	"image"
	"strings"
	"testing"
)

func TestParseSource(t *testing.T) {
	// These bytes encode to characters 62 and 63 of the alphabet ('+' '/'
	// vs '-' '_') and need padding, so every variant below is exercised.
	raw := []byte{0xfb, 0xff, 0xbf, 0xfb, 0xef, 0xbe, 0x00, 0x10}
	std := base64.StdEncoding.EncodeToString(raw)
	urlRaw := base64.RawURLEncoding.EncodeToString(raw)
	if !strings.ContainsAny(std, "+/") || !strings.HasSuffix(std, "=") || !strings.ContainsAny(urlRaw, "-_") {
		t.Fatalf("fixture does not exercise the alphabets: %q %q", std, urlRaw)
	}
	wrapped := func(s string, n int, nl string) string {
		var b strings.Builder
		for len(s) > n {
			b.WriteString(s[:n] + nl)
			s = s[n:]
		}
		return b.String() + s
	}

	tests := []struct {
		name     string
		in       string
		maxBytes int64
		wantURL  string
		wantData []byte
		wantErr  error
	}{
		{name: "plain std", in: std, wantData: raw},
		{name: "std unpadded", in: base64.RawStdEncoding.EncodeToString(raw), wantData: raw},
		{name: "url-safe padded", in: base64.URLEncoding.EncodeToString(raw), wantData: raw},
		{name: "url-safe unpadded", in: urlRaw, wantData: raw},
		{name: "data uri", in: "data:image/png;base64," + std, wantData: raw},
		{name: "data uri upper case", in: "DATA:image/jpeg;BASE64," + std, wantData: raw},
		{name: "data uri with charset", in: "data:image/png;name=x.png;base64," + urlRaw, wantData: raw},
		{name: "newlines crlf", in: wrapped(std, 4, "\r\n"), wantData: raw},
		{name: "newlines and spaces", in: "  \n" + wrapped(std, 3, "\n  ") + "\n\t", wantData: raw},
		{name: "http link", in: "http://example.com/a.jpg", wantURL: "http://example.com/a.jpg"},
		{name: "https link trimmed", in: "  https://example.com/a.jpg?x=1\n", wantURL: "https://example.com/a.jpg?x=1"},
		{name: "link scheme case", in: "HTTPS://example.com/a.jpg", wantURL: "HTTPS://example.com/a.jpg"},
		{name: "empty", in: " \n ", wantErr: ErrBadBase64},
		{name: "garbage", in: "this is not base64!", wantErr: ErrBadBase64},
		{name: "ftp link", in: "ftp://example.com/a.jpg", wantErr: ErrBadBase64},
		{name: "file link", in: "file:///etc/passwd", wantErr: ErrBadBase64},
		{name: "padding in the middle", in: std[:4] + "=" + std[4:], wantErr: ErrBadBase64},
		{name: "data uri not base64", in: "data:image/png,%89PNG", wantErr: ErrBadBase64},
		{name: "data uri without comma", in: "data:image/png;base64", wantErr: ErrBadBase64},
		{name: "too large", in: std, maxBytes: 4, wantErr: ErrTooLarge},
		{name: "exactly at limit", in: std, maxBytes: int64(len(raw)), wantData: raw},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src, err := ParseSource(tc.in, tc.maxBytes)
			wantKind(t, err, tc.wantErr)
			if tc.wantErr != nil {
				return
			}
			if src.URL != tc.wantURL || src.IsLink() != (tc.wantURL != "") {
				t.Fatalf("URL = %q, want %q", src.URL, tc.wantURL)
			}
			if !bytes.Equal(src.Data, tc.wantData) {
				t.Fatalf("Data = %x, want %x", src.Data, tc.wantData)
			}
		})
	}
}

func TestParseSourceMessages(t *testing.T) {
	_, err := ParseSource("%%%", 0)
	wantKind(t, err, ErrBadBase64, "is neither a link nor valid base64 image data")
	_, err = ParseSource(strings.Repeat("QUFB", 1000), 1024)
	wantKind(t, err, ErrTooLarge, "1 KiB")
}

func TestLoadInline(t *testing.T) {
	pngData := encodePNG(t, gradient(64, 48))
	b64 := base64.StdEncoding.EncodeToString(pngData)
	tests := []struct {
		name    string
		in      string
		wantErr error
	}{
		{"plain", b64, nil},
		{"data uri", "data:image/png;base64," + b64, nil},
		{"url-safe unpadded", base64.RawURLEncoding.EncodeToString(pngData), nil},
		{"mime wrapped", wrap76(b64), nil},
		{"not an image", base64.StdEncoding.EncodeToString([]byte("hello, world, definitely not a picture")), ErrNotImage},
		{"not base64", "<svg/>", ErrBadBase64},
	}
	f := NewFetcher(Config{})
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			img, err := Load(context.Background(), tc.in, f)
			wantKind(t, err, tc.wantErr)
			if tc.wantErr == nil && img.Bounds().Size() != image.Pt(64, 48) {
				t.Fatalf("bounds = %v", img.Bounds())
			}
		})
	}
}

func wrap76(s string) string {
	var b strings.Builder
	for len(s) > 76 {
		b.WriteString(s[:76] + "\n")
		s = s[76:]
	}
	return b.String() + s
}
