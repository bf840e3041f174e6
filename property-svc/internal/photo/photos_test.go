package photo

import (
	"context"
	"encoding/base64"
	"errors"
	"testing"
	"time"

	"github.com/vros/vros/property-svc/internal/photo/phototest"
)

func b64(b []byte) string { return base64.StdEncoding.EncodeToString(b) }

// TestInspectMemoryLimit: an image is refused from its header when decoding and rendering
// it would take more than Limits.Memory, with a message naming its size, its bytes per
// pixel, the memory it needs and the most; at exactly the most it is accepted.
func TestInspectMemoryLimit(t *testing.T) {
	bomb := phototest.ZeroPNG(6324, 6324, 16, phototest.RGBA, false)
	n, err := Inspect(bomb, Limits{Memory: 1 << 40})
	if err != nil {
		t.Fatal(err)
	}
	if n.BytesPerPixel != 8 || n.Decoded < 6324*6324*8 {
		t.Fatalf("the 16-bit RGBA bomb: %v bytes per pixel, %d decoded; want 8 and at least %d", n.BytesPerPixel, n.Decoded, 6324*6324*8)
	}
	small := phototest.ZeroPNG(640, 480, 8, phototest.RGB, false)
	s, err := Inspect(small, Limits{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name   string
		data   []byte
		memory int64
		kind   error
		msgs   []string
	}{
		{"the issue's bomb at the default", bomb, 0, ErrTooLarge, []string{"6324x6324 pixels at 8 bytes per pixel would take", "MiB to decode and render; the most is 256 MiB"}},
		{"40 MP 16-bit at the default", phototest.ZeroPNG(7300, 5479, 16, phototest.RGBA, false), 0, ErrTooLarge, []string{"7300x5479 pixels at 8 bytes per pixel"}},
		{"over 40 MP: the pixel limit first", pngHeader(7400, 5500), 0, ErrTooLarge, []string{"exceeds the 40 megapixel limit"}},
		{"exactly the most", small, s.Bytes, nil, nil},
		{"a byte over the most", small, s.Bytes - 1, ErrTooLarge, []string{"640x480 pixels at 4 bytes per pixel", "the most is"}},
		{"a small photo at the default", small, 0, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Inspect(tc.data, Limits{Memory: tc.memory})
			wantKind(t, err, tc.kind, tc.msgs...)
			_, _, err = Decode(tc.data, Limits{Memory: tc.memory})
			wantKind(t, err, tc.kind, tc.msgs...)
		})
	}
}

// TestPhotosWaitForMemory: a photo waits for the memory other photos hold at most
// Config.MaxWait, or until its request ends, and is then refused with ErrBusy (not an
// input error); once the memory is free it is processed.
func TestPhotosWaitForMemory(t *testing.T) {
	img := b64(phototest.ZeroPNG(64, 48, 8, phototest.RGB, false))
	n, err := Inspect(phototest.ZeroPNG(64, 48, 8, phototest.RGB, false), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	p := NewPhotos(NewFetcher(Config{Limits: Limits{Memory: n.Bytes}, MaxWait: time.Nanosecond}))
	if err := p.mem.Acquire(context.Background(), 1); err != nil { // another photo holds a byte
		t.Fatal(err)
	}
	waited := make(chan Need, 4)
	p.waiting = func(n Need) { waited <- n }

	_, err = p.Process(context.Background(), img)
	if !errors.Is(err, ErrBusy) || errors.Is(err, ErrTooLarge) {
		t.Fatalf("memory held past MaxWait: %v; want ErrBusy", err)
	}
	if _, ok := AsError(err); ok {
		t.Errorf("ErrBusy is an input *Error: %v", err)
	}
	if got := <-waited; got.Bytes != n.Bytes {
		t.Errorf("waited for %d bytes, want %d", got.Bytes, n.Bytes)
	}

	ctx, cancel := context.WithCancel(context.Background())
	p.waiting = func(Need) { cancel() } // the client goes away while the photo waits
	p.fetcher.cfg.MaxWait = time.Hour
	_, err = p.Process(ctx, img)
	if !errors.Is(err, ErrBusy) || !errors.Is(err, context.Canceled) {
		t.Fatalf("request ended while waiting: %v; want ErrBusy and context.Canceled", err)
	}

	p.mem.Release(1)
	p.waiting = func(Need) { t.Error("waited with the memory free") }
	res, err := p.Process(context.Background(), img)
	if err != nil || len(res.Renditions) != len(specs) {
		t.Fatalf("with the memory free: %v, %v", res, err)
	}
	if !p.mem.TryAcquire(n.Bytes) {
		t.Error("the memory was not given back after the photo")
	}
}
