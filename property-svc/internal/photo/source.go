package photo

import (
	"context"
	"encoding/base64"
	"image"
	"strings"
	"sync"
)

// Source is a parsed photo "image" field: either a link to fetch or inline
// image bytes decoded from base64.
type Source struct {
	URL  string // set for links (http/https)
	Data []byte // set for inline base64 data
}

// IsLink reports whether the source must be downloaded.
func (s Source) IsLink() bool { return s.URL != "" }

// ParseSource classifies the spec's image field. Links must start with
// http:// or https:// (case-insensitive). Everything else is treated as
// base64: an optional data URI prefix ("data:image/png;base64,"), any
// whitespace or newlines, standard or URL-safe alphabet, padded or not.
// Inline data larger than maxBytes (<=0: DefaultMaxBytes) is ErrTooLarge.
func ParseSource(field string, maxBytes int64) (Source, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultMaxBytes
	}
	s := strings.TrimSpace(field)
	if s == "" {
		return Source{}, newErr(ErrBadBase64, nil, "the field is empty")
	}
	if IsLink(s) {
		return Source{URL: s}, nil
	}
	if hasPrefixFold(s, "data:") {
		comma := strings.IndexByte(s, ',')
		if comma < 0 {
			return Source{}, newErr(ErrBadBase64, nil, "malformed data URI")
		}
		meta := strings.ToLower(s[len("data:"):comma])
		if !strings.HasSuffix(strings.TrimSpace(meta), ";base64") {
			return Source{}, newErr(ErrBadBase64, nil, "data URI must be base64 encoded")
		}
		s = s[comma+1:]
	}
	// Bound the payload before allocating for it.
	if int64(base64.RawStdEncoding.DecodedLen(countB64(s))) > maxBytes {
		return Source{}, newErr(ErrTooLarge, nil, "image data exceeds the %s limit", formatBytes(maxBytes))
	}
	data, err := decodeBase64(s)
	if err != nil {
		return Source{}, newErr(ErrBadBase64, err, "")
	}
	if len(data) == 0 {
		return Source{}, newErr(ErrBadBase64, nil, "no image data")
	}
	if int64(len(data)) > maxBytes {
		return Source{}, newErr(ErrTooLarge, nil, "image data exceeds the %s limit", formatBytes(maxBytes))
	}
	return Source{Data: data}, nil
}

// countB64 counts characters that are not whitespace or padding.
func countB64(s string) int {
	n := 0
	for i := 0; i < len(s); i++ {
		switch s[i] {
		case ' ', '\t', '\r', '\n', '\f', '\v', '=':
		default:
			n++
		}
	}
	return n
}

// decodeBase64 accepts the standard and the URL-safe alphabet, with or
// without padding, ignoring ASCII whitespace.
func decodeBase64(s string) ([]byte, error) {
	b := make([]byte, 0, len(s))
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case ' ', '\t', '\r', '\n', '\f', '\v':
		case '-':
			b = append(b, '+')
		case '_':
			b = append(b, '/')
		default:
			b = append(b, c)
		}
	}
	// Padding is optional but, when present, must only be at the end.
	trimmed := len(b)
	for trimmed > 0 && b[trimmed-1] == '=' && len(b)-trimmed < 2 {
		trimmed--
	}
	b = b[:trimmed]
	out := make([]byte, base64.RawStdEncoding.DecodedLen(len(b)))
	n, err := base64.RawStdEncoding.Decode(out, b)
	if err != nil {
		return nil, err
	}
	return out[:n], nil
}

var (
	defaultFetcherOnce sync.Once
	defaultFetcher     *Fetcher
)

// DefaultFetcher returns a shared Fetcher with the default (production)
// configuration.
func DefaultFetcher() *Fetcher {
	defaultFetcherOnce.Do(func() { defaultFetcher = NewFetcher(Config{}) })
	return defaultFetcher
}

// Load is the single entry point for a spec photo "image" field: it parses
// the field, downloads links with f (nil: DefaultFetcher), enforces the
// byte and pixel limits of f's Config and decodes the image. The returned
// image is already in display orientation (JPEG EXIF orientation applied
// lazily; Render knows how to do that cheaply). Input problems are *Error. Load takes no
// share of a Photos' memory: a service processes photos with Photos.Process.
func Load(ctx context.Context, field string, f *Fetcher) (image.Image, error) {
	if f == nil {
		f = DefaultFetcher()
	}
	src, err := ParseSource(field, f.cfg.MaxBytes)
	if err != nil {
		return nil, err
	}
	data := src.Data
	if src.IsLink() {
		if data, err = f.Fetch(ctx, src.URL); err != nil {
			return nil, err
		}
	}
	img, _, err := Decode(data, f.cfg.Limits)
	return img, err
}
