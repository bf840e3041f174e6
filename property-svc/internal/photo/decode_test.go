package photo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/color/palette"
	"image/jpeg"
	"os"
	"runtime"
	"testing"
)

func TestDecodeFormats(t *testing.T) {
	readFile := func(name string) []byte {
		b, err := os.ReadFile("testdata/" + name)
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	paletted := image.NewPaletted(image.Rect(0, 0, 40, 30), palette.Plan9)
	for i := range paletted.Pix {
		paletted.Pix[i] = uint8(i % 256)
	}
	tests := []struct {
		name       string
		data       []byte
		wantFormat Format
		wantW      int
		wantH      int
	}{
		{"jpeg", encodeJPEG(t, gradient(120, 80)), JPEG, 120, 80},
		{"png", encodePNG(t, gradient(33, 17)), PNG, 33, 17},
		{"gif", encodeGIF(t, paletted), GIF, 40, 30},
		{"webp lossy", readFile("blue-purple-pink.lossy.webp"), WebP, 0, 0},
		{"webp lossless alpha", readFile("gopher-doc.with-alpha.lossless.webp"), WebP, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			if got := Sniff(tc.data); got != tc.wantFormat {
				t.Fatalf("Sniff = %q, want %q", got, tc.wantFormat)
			}
			img, format, err := Decode(tc.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if format != tc.wantFormat {
				t.Fatalf("format = %q, want %q", format, tc.wantFormat)
			}
			b := img.Bounds()
			if b.Dx() < 16 || b.Dy() < 16 {
				t.Fatalf("bounds %v", b)
			}
			if tc.wantW != 0 && (b.Dx() != tc.wantW || b.Dy() != tc.wantH) {
				t.Fatalf("size %dx%d, want %dx%d", b.Dx(), b.Dy(), tc.wantW, tc.wantH)
			}
			// Every format must also render.
			res, err := Render(img)
			if err != nil {
				t.Fatal(err)
			}
			if res.Width != b.Dx() || res.Height != b.Dy() {
				t.Fatalf("result size %dx%d", res.Width, res.Height)
			}
		})
	}
}

func TestDecodeRejects(t *testing.T) {
	valid := encodePNG(t, gradient(64, 64))
	jpg := encodeJPEG(t, gradient(64, 64))
	tests := []struct {
		name string
		data []byte
		lim  Limits
		want error
		msg  string
	}{
		{"empty", nil, Limits{}, ErrNotImage, "is not a JPEG, PNG, GIF or WebP image"},
		{"garbage", []byte("definitely not an image, just some text"), Limits{}, ErrNotImage, ""},
		{"html", []byte("<!doctype html><html><body>404</body></html>"), Limits{}, ErrNotImage, ""},
		{"bmp", append([]byte("BM"), make([]byte, 64)...), Limits{}, ErrNotImage, ""},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" width="100" height="100"/>`), Limits{}, ErrNotImage, ""},
		{"png magic only", []byte("\x89PNG\r\n\x1a\n"), Limits{}, ErrNotImage, "PNG"},
		{"truncated png", valid[:len(valid)/2], Limits{}, ErrNotImage, "PNG"},
		{"truncated jpeg", jpg[:len(jpg)/3], Limits{}, ErrNotImage, "JPEG"},
		{"png 100000x100000", pngHeader(100000, 100000), Limits{}, ErrTooLarge, "100000x100000 pixels exceeds the 40 megapixel limit"},
		{"png just over 40MP", pngHeader(8000, 5001), Limits{}, ErrTooLarge, ""},
		{"png wide strip", pngHeader(1<<31-1, 16), Limits{}, ErrTooLarge, ""},
		{"gif 65535x65535", gifHeader(65535, 65535), Limits{}, ErrTooLarge, ""},
		{"custom pixel limit", valid, Limits{MaxPixels: 64*64 - 1}, ErrTooLarge, "4095 pixel"},
		{"byte limit", valid, Limits{MaxBytes: int64(len(valid) - 1)}, ErrTooLarge, ""},
		{"tiny 8x8", encodePNG(t, gradient(8, 8)), Limits{}, ErrTooSmall, "8x8 pixels, the minimum is 16x16"},
		{"16x15", encodePNG(t, gradient(16, 15)), Limits{}, ErrTooSmall, ""},
		{"15x300", encodeJPEG(t, gradient(15, 300)), Limits{}, ErrTooSmall, ""},
		{"tiny gif", encodeGIF(t, image.NewPaletted(image.Rect(0, 0, 4, 4), palette.Plan9)), Limits{}, ErrTooSmall, ""},
		{"custom min side", valid, Limits{MinSide: 65}, ErrTooSmall, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := Decode(tc.data, tc.lim)
			if tc.msg == "" {
				wantKind(t, err, tc.want)
			} else {
				wantKind(t, err, tc.want, tc.msg)
			}
		})
	}
	// The smallest accepted size is accepted.
	if _, _, err := Decode(encodePNG(t, gradient(16, 16)), Limits{}); err != nil {
		t.Fatalf("16x16: %v", err)
	}
}

// The pixel limit must be enforced from the header, before any pixel
// buffer is allocated.
func TestDecodeBombDoesNotAllocate(t *testing.T) {
	bombs := map[string][]byte{
		"png": pngHeader(100000, 100000),
		"gif": gifHeader(65535, 65535),
	}
	for name, data := range bombs {
		var before, after runtime.MemStats
		runtime.GC()
		runtime.ReadMemStats(&before)
		_, _, err := Decode(data, Limits{})
		runtime.ReadMemStats(&after)
		wantKind(t, err, ErrTooLarge)
		if d := after.TotalAlloc - before.TotalAlloc; d > 1<<20 {
			t.Fatalf("%s: allocated %d bytes while rejecting", name, d)
		}
	}
}

func TestEXIFOrientation(t *testing.T) {
	type quad = [4]string // display TL, TR, BL, BR
	tests := []struct {
		o    uint16
		want quad
	}{
		{1, quad{"R", "B", "G", "Y"}},
		{2, quad{"B", "R", "Y", "G"}},
		{3, quad{"Y", "G", "B", "R"}},
		{4, quad{"G", "Y", "R", "B"}},
		{5, quad{"R", "G", "B", "Y"}},
		{6, quad{"G", "R", "Y", "B"}},
		{7, quad{"Y", "B", "G", "R"}},
		{8, quad{"B", "Y", "R", "G"}},
	}
	name := func(c color.Color) string {
		switch {
		case near(c, 255, 0, 0, 60):
			return "R"
		case near(c, 0, 0, 255, 60):
			return "B"
		case near(c, 0, 255, 0, 60):
			return "G"
		case near(c, 255, 255, 0, 60):
			return "Y"
		}
		r, g, b, _ := c.RGBA()
		return fmt.Sprintf("?(%d,%d,%d)", r>>8, g>>8, b>>8)
	}
	corners := func(m image.Image) quad {
		b := m.Bounds()
		dx, dy := b.Dx()/4, b.Dy()/4
		return quad{
			name(m.At(b.Min.X+dx, b.Min.Y+dy)), name(m.At(b.Max.X-1-dx, b.Min.Y+dy)),
			name(m.At(b.Min.X+dx, b.Max.Y-1-dy)), name(m.At(b.Max.X-1-dx, b.Max.Y-1-dy)),
		}
	}
	base := encodeJPEG(t, quadrants(80, 40))
	for _, tc := range tests {
		data := withEXIFOrientation(base, tc.o)
		if got := jpegOrientation(data); got != int(tc.o) {
			t.Fatalf("o=%d: parsed orientation %d", tc.o, got)
		}
		img, _, err := Decode(data, Limits{})
		if err != nil {
			t.Fatal(err)
		}
		wantW, wantH := 80, 40
		if tc.o >= 5 {
			wantW, wantH = 40, 80
		}
		if s := img.Bounds().Size(); s != image.Pt(wantW, wantH) {
			t.Fatalf("o=%d: size %v, want %dx%d", tc.o, s, wantW, wantH)
		}
		if got := corners(img); got != tc.want {
			t.Errorf("o=%d: lazy image corners %v, want %v", tc.o, got, tc.want)
		}
		// Render takes the fast path (scale, then rotate the RGBA).
		res, err := Render(img)
		if err != nil {
			t.Fatal(err)
		}
		orig := res.Renditions[Original]
		if orig.Width != wantW || orig.Height != wantH {
			t.Fatalf("o=%d: original rendition %dx%d", tc.o, orig.Width, orig.Height)
		}
		out, err := jpeg.Decode(bytes.NewReader(orig.Data))
		if err != nil {
			t.Fatal(err)
		}
		if got := corners(out); got != tc.want {
			t.Errorf("o=%d: rendered corners %v, want %v", tc.o, got, tc.want)
		}
	}
	// Non-JPEG and broken EXIF are simply orientation 1.
	if got := jpegOrientation(encodePNG(t, gradient(20, 20))); got != 1 {
		t.Fatalf("png orientation %d", got)
	}
	broken := withEXIFOrientation(base, 6)
	broken[2+4+6+3] = 43 // SOI, APP1 header, "Exif\0\0", "MM\0" then the TIFF magic 42
	if got := jpegOrientation(broken); got != 1 {
		t.Fatalf("broken exif orientation %d", got)
	}
}
