package photo

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"strings"
	"testing"
)

// gradient returns a w×h opaque image with R growing left→right and G
// growing top→bottom, so crops and distortions are measurable.
func gradient(w, h int) *image.NRGBA {
	m := image.NewNRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			i := m.PixOffset(x, y)
			m.Pix[i+0] = uint8(x * 255 / max(1, w-1))
			m.Pix[i+1] = uint8(y * 255 / max(1, h-1))
			m.Pix[i+2] = uint8((x ^ y) & 0x3f)
			m.Pix[i+3] = 0xff
		}
	}
	return m
}

// quadrants returns a w×h image: top-left red, top-right blue, bottom-left
// green, bottom-right yellow.
func quadrants(w, h int) *image.RGBA {
	m := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			var c color.RGBA
			switch {
			case x < w/2 && y < h/2:
				c = color.RGBA{255, 0, 0, 255}
			case y < h/2:
				c = color.RGBA{0, 0, 255, 255}
			case x < w/2:
				c = color.RGBA{0, 255, 0, 255}
			default:
				c = color.RGBA{255, 255, 0, 255}
			}
			m.SetRGBA(x, y, c)
		}
	}
	return m
}

func encodePNG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, m); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, m, &jpeg.Options{Quality: 90}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeGIF(t testing.TB, m image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := gif.Encode(&b, m, nil); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// pngHeader is a syntactically valid PNG signature + IHDR (correct CRC)
// declaring w×h, with no pixel data at all.
func pngHeader(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8] = 8 // bit depth
	ihdr[9] = 6 // RGBA
	_ = binary.Write(&b, binary.BigEndian, uint32(len(ihdr)))
	crc := crc32.NewIEEE()
	crc.Write([]byte("IHDR"))
	crc.Write(ihdr)
	b.WriteString("IHDR")
	b.Write(ihdr)
	_ = binary.Write(&b, binary.BigEndian, crc.Sum32())
	return b.Bytes()
}

// gifHeader is a GIF header declaring a w×h logical screen and nothing else.
func gifHeader(w, h uint16) []byte {
	b := []byte("GIF89a")
	b = binary.LittleEndian.AppendUint16(b, w)
	b = binary.LittleEndian.AppendUint16(b, h)
	return append(b, 0, 0, 0)
}

// withEXIFOrientation inserts an APP1 Exif segment with tag 0x0112 = o
// right after the SOI marker of a JPEG.
func withEXIFOrientation(jpg []byte, o uint16) []byte {
	tiff := []byte{'M', 'M', 0, 42, 0, 0, 0, 8, // header, IFD0 at 8
		0, 1, // one entry
		0x01, 0x12, 0, 3, 0, 0, 0, 1, byte(o >> 8), byte(o), 0, 0, // orientation SHORT
		0, 0, 0, 0, // no next IFD
	}
	payload := append([]byte("Exif\x00\x00"), tiff...)
	seg := []byte{0xFF, 0xE1, byte((len(payload) + 2) >> 8), byte(len(payload) + 2)}
	out := append([]byte{}, jpg[:2]...)
	out = append(out, seg...)
	out = append(out, payload...)
	return append(out, jpg[2:]...)
}

// wantKind fails unless err is an *Error of the given kind whose message
// contains all of msgs.
func wantKind(t *testing.T, err, kind error, msgs ...string) {
	t.Helper()
	if kind == nil {
		if err != nil {
			t.Fatalf("unexpected error: %v", err)
		}
		return
	}
	if err == nil {
		t.Fatalf("got nil error, want %v", kind)
	}
	if !errors.Is(err, kind) {
		t.Fatalf("error %q (%T) is not %v", err, err, kind)
	}
	pe, ok := AsError(err)
	if !ok {
		t.Fatalf("error %q is not a *photo.Error", err)
	}
	if pe.Field() != "photo.image" {
		t.Fatalf("field = %q", pe.Field())
	}
	for _, m := range msgs {
		if !strings.Contains(err.Error(), m) {
			t.Fatalf("error %q does not contain %q", err, m)
		}
	}
}

// near reports whether two colors are within tol per channel.
func near(c color.Color, r, g, b uint8, tol int) bool {
	cr, cg, cb, _ := c.RGBA()
	d := func(a uint32, b uint8) bool {
		v := int(a>>8) - int(b)
		return v >= -tol && v <= tol
	}
	return d(cr, r) && d(cg, g) && d(cb, b)
}
