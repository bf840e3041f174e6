package photo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"testing"

	"github.com/vros/vros/property-svc/internal/photo/phototest"
)

// allocated is the bytes the process has allocated on the heap so far (only grows).
func allocated() uint64 {
	s := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

func goImage(t testing.TB, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", "goimage", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// pixBytes is the size of a decoded image's pixel buffers.
func pixBytes(m image.Image) int {
	switch m := m.(type) {
	case *image.YCbCr:
		return len(m.Y) + len(m.Cb) + len(m.Cr)
	case *image.NYCbCrA:
		return len(m.Y) + len(m.Cb) + len(m.Cr) + len(m.A)
	case *image.Gray:
		return len(m.Pix)
	case *image.Gray16:
		return len(m.Pix)
	case *image.RGBA:
		return len(m.Pix)
	case *image.NRGBA:
		return len(m.Pix)
	case *image.RGBA64:
		return len(m.Pix)
	case *image.NRGBA64:
		return len(m.Pix)
	case *image.Paletted:
		return len(m.Pix)
	case *image.CMYK:
		return len(m.Pix)
	}
	return -1
}

// TestBytesPerPixel: the bytes per pixel Inspect reads from the header are those of the
// image the decoder returns, for every PNG colour type and bit depth (with and without a
// tRNS chunk), every JPEG kind (each chroma subsampling, progressive, gray, CMYK, RGB),
// GIF and WebP.
func TestBytesPerPixel(t *testing.T) {
	const w, h = 40, 30
	z := func(depth, ct byte, trns bool) []byte { return phototest.ZeroPNG(w, h, depth, ct, trns) }
	for _, tc := range []struct {
		name     string
		data     []byte
		wantType string
		wantBPP  float64
	}{
		{"PNG gray 1-bit", z(1, phototest.Gray, false), "*image.Gray", 1},
		{"PNG gray 2-bit", z(2, phototest.Gray, false), "*image.Gray", 1},
		{"PNG gray 4-bit", z(4, phototest.Gray, false), "*image.Gray", 1},
		{"PNG gray 8-bit", z(8, phototest.Gray, false), "*image.Gray", 1},
		{"PNG gray 4-bit tRNS", z(4, phototest.Gray, true), "*image.NRGBA", 4},
		{"PNG gray 8-bit tRNS", z(8, phototest.Gray, true), "*image.NRGBA", 4},
		{"PNG gray 16-bit", z(16, phototest.Gray, false), "*image.Gray16", 2},
		{"PNG gray 16-bit tRNS", z(16, phototest.Gray, true), "*image.NRGBA64", 8},
		{"PNG RGB 8-bit", z(8, phototest.RGB, false), "*image.RGBA", 4},
		{"PNG RGB 8-bit tRNS", z(8, phototest.RGB, true), "*image.NRGBA", 4},
		{"PNG RGB 16-bit", z(16, phototest.RGB, false), "*image.RGBA64", 8},
		{"PNG RGB 16-bit tRNS", z(16, phototest.RGB, true), "*image.NRGBA64", 8},
		{"PNG paletted 1-bit", z(1, phototest.Paletted, false), "*image.Paletted", 1},
		{"PNG paletted 8-bit tRNS", z(8, phototest.Paletted, true), "*image.Paletted", 1},
		{"PNG gray+alpha 8-bit", z(8, phototest.GrayAlpha, false), "*image.NRGBA", 4},
		{"PNG gray+alpha 16-bit", z(16, phototest.GrayAlpha, false), "*image.NRGBA64", 8},
		{"PNG RGBA 8-bit", z(8, phototest.RGBA, false), "*image.NRGBA", 4},
		{"PNG RGBA 16-bit", z(16, phototest.RGBA, false), "*image.NRGBA64", 8},
		{"PNG RGBA 16-bit interlaced", phototest.ZeroPNGInterlaced(w, h, 16, phototest.RGBA, false, true), "*image.NRGBA64", 8},
		{"JPEG 4:4:4", goImage(t, "video-001.q50.444.jpeg"), "*image.YCbCr", 3},
		{"JPEG 4:2:2", goImage(t, "video-001.q50.422.jpeg"), "*image.YCbCr", 2},
		{"JPEG 4:4:0", goImage(t, "video-001.q50.440.jpeg"), "*image.YCbCr", 2},
		{"JPEG 4:2:0", goImage(t, "video-001.q50.420.jpeg"), "*image.YCbCr", 1.5},
		{"JPEG 4:1:1", goImage(t, "video-001.q50.411.jpeg"), "*image.YCbCr", 1.5},
		{"JPEG 4:1:0", goImage(t, "video-001.q50.410.jpeg"), "*image.YCbCr", 1.25},
		{"JPEG 4:4:4 progressive", goImage(t, "video-001.q50.444.progressive.jpeg"), "*image.YCbCr", 3},
		{"JPEG 4:2:0 progressive", goImage(t, "video-001.q50.420.progressive.jpeg"), "*image.YCbCr", 1.5},
		{"JPEG gray", goImage(t, "video-005.gray.q50.jpeg"), "*image.Gray", 1},
		{"JPEG gray progressive", goImage(t, "video-005.gray.q50.progressive.jpeg"), "*image.Gray", 1},
		{"JPEG CMYK", goImage(t, "video-001.cmyk.jpeg"), "*image.CMYK", 4},
		{"JPEG RGB", goImage(t, "video-001.rgb.jpeg"), "*image.RGBA", 4},
		{"GIF", goImage(t, "video-001.gif"), "*image.Paletted", 1},
		{"GIF interlaced", goImage(t, "video-001.interlaced.gif"), "*image.Paletted", 1},
		{"WebP lossy", mustRead(t, "testdata/blue-purple-pink.lossy.webp"), "*image.YCbCr", 1.5},
		{"WebP lossless with alpha", mustRead(t, "testdata/gopher-doc.with-alpha.lossless.webp"), "*image.NRGBA", 4},
	} {
		t.Run(tc.name, func(t *testing.T) {
			n, err := Inspect(tc.data, Limits{})
			if err != nil {
				t.Fatal(err)
			}
			if math.Abs(n.BytesPerPixel-tc.wantBPP) > 0.03 {
				t.Errorf("Inspect: %v bytes per pixel, want %v", n.BytesPerPixel, tc.wantBPP)
			}
			img, err := codecs[n.Format].decode(bytes.NewReader(tc.data))
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%T", img); got != tc.wantType {
				t.Errorf("the decoder returns %s, want %s", got, tc.wantType)
			}
			b := img.Bounds()
			// The decoder's buffers may be padded (JPEG: to whole MCUs): up to 16 rows
			// and columns more.
			got := float64(pixBytes(img)) / float64(b.Dx()*b.Dy())
			padded := float64((b.Dx()+16)*(b.Dy()+16)) / float64(b.Dx()*b.Dy())
			if got < n.BytesPerPixel*0.97 || got > n.BytesPerPixel*padded {
				t.Errorf("the decoded %T holds %.3f bytes per pixel; Inspect said %v", img, got, n.BytesPerPixel)
			}
			if int64(pixBytes(img)) > n.Decoded {
				t.Errorf("the decoded image holds %d bytes, more than the %d Inspect counts for decoding", pixBytes(img), n.Decoded)
			}
		})
	}
}

func mustRead(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// noise is a w×h opaque image of random pixels: the worst case for the encoded size of
// renditions.
func noise(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range m.Pix {
		m.Pix[i] = uint8(r.Uint32())
	}
	for i := 3; i < len(m.Pix); i += 4 {
		m.Pix[i] = 0xff
	}
	return m
}

// TestNeedBoundsDecodeAndRender: for images of every kind, shape and size class, the bytes
// decoding and rendering allocate (all of them, so also the most held at once) are at
// most Inspect's Need, and Need is not far above them (it is what the photo budget
// charges).
func TestNeedBoundsDecodeAndRender(t *testing.T) {
	if testing.Short() {
		t.Skip("decodes and renders images of up to 100 MB")
	}
	jpg := func(m image.Image, q int) []byte {
		var b bytes.Buffer
		if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: q}); err != nil {
			t.Fatal(err)
		}
		return b.Bytes()
	}
	gray := image.NewGray(image.Rect(0, 0, 3000, 2000))
	pal := image.NewPaletted(image.Rect(0, 0, 3000, 2000), color.Palette{color.Black, color.White})
	var gifBuf bytes.Buffer
	if err := gif.Encode(&gifBuf, pal, nil); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		data func() []byte
	}{
		{"PNG 16-bit RGBA 3000x2000", func() []byte { return phototest.ZeroPNG(3000, 2000, 16, phototest.RGBA, false) }},
		{"PNG 16-bit RGBA 3000x2000 interlaced", func() []byte {
			return phototest.ZeroPNGInterlaced(3000, 2000, 16, phototest.RGBA, false, true)
		}},
		{"PNG 8-bit RGB 8000x3000 (halved first)", func() []byte { return phototest.ZeroPNG(8000, 3000, 8, phototest.RGB, false) }},
		{"PNG 8-bit RGBA 9000x1000 panorama", func() []byte { return phototest.ZeroPNG(9000, 1000, 8, phototest.RGBA, false) }},
		{"PNG 8-bit gray 20x20000 tall", func() []byte { return phototest.ZeroPNG(20, 20000, 8, phototest.Gray, false) }},
		{"PNG paletted 4000x3000", func() []byte { return phototest.ZeroPNG(4000, 3000, 8, phototest.Paletted, false) }},
		{"PNG 8-bit RGB noise 2200x2200", func() []byte { return encodePNG(t, noise(2200, 2200)) }},
		{"PNG 8-bit RGB 64x48 small", func() []byte { return phototest.ZeroPNG(64, 48, 8, phototest.RGB, false) }},
		{"JPEG 4:2:0 noise 4000x3000", func() []byte { return jpg(noise(4000, 3000), 95) }},
		{"JPEG 4:2:0 8000x4000 (halved first)", func() []byte { return jpg(gradient(8000, 4000), 85) }},
		{"JPEG 4:2:0 4000x3000 EXIF 6", func() []byte { return withEXIFOrientation(jpg(gradient(4000, 3000), 85), 6) }},
		{"JPEG gray 3000x2000", func() []byte { return jpg(gray, 85) }},
		{"JPEG progressive 4:4:4", func() []byte { return goImage(t, "video-001.q50.444.progressive.jpeg") }},
		{"JPEG CMYK", func() []byte { return goImage(t, "video-001.cmyk.jpeg") }},
		{"JPEG RGB", func() []byte { return goImage(t, "video-001.rgb.jpeg") }},
		{"GIF 3000x2000", func() []byte { return gifBuf.Bytes() }},
		{"GIF interlaced", func() []byte { return goImage(t, "video-001.interlaced.gif") }},
		{"WebP lossy", func() []byte { return mustRead(t, "testdata/blue-purple-pink.lossy.webp") }},
		{"WebP lossless", func() []byte { return mustRead(t, "testdata/gopher-doc.with-alpha.lossless.webp") }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := tc.data()
			lim := Limits{Memory: 1 << 40}
			n, err := Inspect(data, lim)
			if err != nil {
				t.Fatal(err)
			}
			runtime.GC()
			before := allocated()
			img, err := decodeInspected(data, n, lim.withDefaults())
			if err != nil {
				t.Fatal(err)
			}
			decoded := allocated() - before
			if _, err := Render(img); err != nil {
				t.Fatal(err)
			}
			all := allocated() - before
			t.Logf("%dx%d: decode %.1f MiB (Need %.1f), decode+render %.1f MiB (Need %.1f)",
				n.Width, n.Height, float64(decoded)/(1<<20), float64(n.Decoded)/(1<<20), float64(all)/(1<<20), float64(n.Bytes)/(1<<20))
			if int64(all) > n.Bytes {
				t.Errorf("decoding and rendering allocated %d bytes, more than Need's %d", all, n.Bytes)
			}
			if int64(decoded) > n.Decoded+fixedOverhead {
				t.Errorf("decoding allocated %d bytes, more than Need.Decoded %d and the fixed %d", decoded, n.Decoded, fixedOverhead)
			}
		})
	}
}
