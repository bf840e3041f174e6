package photo

import (
	"bytes"
	"encoding/binary"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"strconv"

	"golang.org/x/image/webp"
)

// Format is a sniffed input format.
type Format string

const (
	JPEG Format = "jpeg"
	PNG  Format = "png"
	GIF  Format = "gif"
	WebP Format = "webp"
)

// Sniff returns the format of data from its magic bytes, or "" if it is not
// one of the accepted formats. It does not depend on which decoders happen
// to be registered with package image.
func Sniff(data []byte) Format {
	switch {
	case len(data) >= 3 && data[0] == 0xFF && data[1] == 0xD8 && data[2] == 0xFF:
		return JPEG
	case len(data) >= 8 && string(data[:8]) == "\x89PNG\r\n\x1a\n":
		return PNG
	case len(data) >= 6 && (string(data[:6]) == "GIF87a" || string(data[:6]) == "GIF89a"):
		return GIF
	case len(data) >= 12 && string(data[:4]) == "RIFF" && string(data[8:12]) == "WEBP":
		return WebP
	}
	return ""
}

type codec struct {
	name   string
	config func(io.Reader) (image.Config, error)
	decode func(io.Reader) (image.Image, error)
}

var codecs = map[Format]codec{
	JPEG: {"JPEG", jpeg.DecodeConfig, jpeg.Decode},
	PNG:  {"PNG", png.DecodeConfig, png.Decode},
	GIF:  {"GIF", gif.DecodeConfig, gif.Decode}, // first frame only
	WebP: {"WebP", webp.DecodeConfig, webp.Decode},
}

// Inspect reads an image's header and checks it against lim: the encoded size, the
// pixels, the smallest side and the memory decoding and rendering it would take (Need),
// which must not exceed lim.Memory. Nothing is decoded: an image refused here has cost
// no pixel memory.
func Inspect(data []byte, lim Limits) (Need, error) {
	lim = lim.withDefaults()
	if int64(len(data)) > lim.MaxBytes {
		return Need{}, newErr(ErrTooLarge, nil, "image data exceeds the %s limit", formatBytes(lim.MaxBytes))
	}
	format := Sniff(data)
	c, ok := codecs[format]
	if !ok {
		return Need{}, newErr(ErrNotImage, nil, "")
	}
	cfg, err := c.config(bytes.NewReader(data))
	if err != nil {
		return Need{Format: format}, newErr(ErrNotImage, err, "corrupt %s header", c.name)
	}
	if err := checkDims(cfg.Width, cfg.Height, lim); err != nil {
		return Need{Format: format}, err
	}
	n := need(format, cfg.Width, cfg.Height, data)
	if n.Bytes > lim.Memory {
		return n, tooMuchMemory(n, lim.Memory)
	}
	return n, nil
}

// Decode inspects (Inspect), then decodes an image: images over any of lim's limits are
// refused before any pixel memory is allocated. JPEG EXIF orientation is honoured: the
// returned image has display orientation (see Render for the fast path).
func Decode(data []byte, lim Limits) (image.Image, Format, error) {
	n, err := Inspect(data, lim)
	if err != nil {
		return nil, n.Format, err
	}
	img, err := decodeInspected(data, n, lim.withDefaults())
	return img, n.Format, err
}

// decodeInspected decodes data, which Inspect has accepted as n.
func decodeInspected(data []byte, n Need, lim Limits) (image.Image, error) {
	format := n.Format
	c := codecs[format]
	cfg := image.Config{Width: n.Width, Height: n.Height}
	img, err := c.decode(bytes.NewReader(data))
	if err != nil {
		return nil, newErr(ErrNotImage, err, "corrupt or truncated %s data", c.name)
	}
	b := img.Bounds()
	if format == GIF && b != image.Rect(0, 0, cfg.Width, cfg.Height) {
		// First frame smaller than (or offset in) the logical screen:
		// composite it onto a transparent canvas of the screen size.
		canvas := image.NewNRGBA(image.Rect(0, 0, cfg.Width, cfg.Height))
		draw.Draw(canvas, b, img, b.Min, draw.Src)
		img, b = canvas, canvas.Bounds()
	}
	// Decoders must agree with their header; never trust it blindly.
	if err := checkDims(b.Dx(), b.Dy(), lim); err != nil {
		return nil, err
	}
	if n.orientation > 1 {
		img = newOriented(img, n.orientation)
	}
	return img, nil
}

func checkDims(w, h int, lim Limits) error {
	if w <= 0 || h <= 0 || int64(w)*int64(h) > lim.MaxPixels {
		return newErr(ErrTooLarge, nil, "%dx%d pixels exceeds the %s limit", w, h, formatPixels(lim.MaxPixels))
	}
	if w < lim.MinSide || h < lim.MinSide {
		return newErr(ErrTooSmall, nil, "%dx%d pixels, the minimum is %dx%d", w, h, lim.MinSide, lim.MinSide)
	}
	return nil
}

func formatPixels(n int64) string {
	if n >= 1_000_000 && n%1_000_000 == 0 {
		return strconv.FormatInt(n/1_000_000, 10) + " megapixel"
	}
	return strconv.FormatInt(n, 10) + " pixel"
}

// jpegOrientation returns the EXIF orientation (1..8) of a JPEG, 1 if absent
// or unreadable. Only the marker segments before the first scan are read.
func jpegOrientation(data []byte) int {
	if len(data) < 4 || data[0] != 0xFF || data[1] != 0xD8 {
		return 1
	}
	i := 2
	for i+4 <= len(data) {
		if data[i] != 0xFF {
			return 1
		}
		marker := data[i+1]
		switch {
		case marker == 0xFF: // fill byte
			i++
			continue
		case marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8): // no length
			i += 2
			continue
		case marker == 0xDA || marker == 0xD9: // start of scan, end of image
			return 1
		}
		n := int(data[i+2])<<8 | int(data[i+3])
		if n < 2 || i+2+n > len(data) {
			return 1
		}
		seg := data[i+4 : i+2+n]
		if marker == 0xE1 && len(seg) >= 6 && string(seg[:6]) == "Exif\x00\x00" {
			return exifOrientation(seg[6:])
		}
		i += 2 + n
	}
	return 1
}

// exifOrientation reads tag 0x0112 from IFD0 of a TIFF structure.
func exifOrientation(t []byte) int {
	if len(t) < 8 {
		return 1
	}
	var bo binary.ByteOrder
	switch string(t[:2]) {
	case "II":
		bo = binary.LittleEndian
	case "MM":
		bo = binary.BigEndian
	default:
		return 1
	}
	if bo.Uint16(t[2:]) != 42 {
		return 1
	}
	off := uint64(bo.Uint32(t[4:]))
	if off < 8 || off+2 > uint64(len(t)) {
		return 1
	}
	count := int(bo.Uint16(t[off:]))
	p := int(off) + 2
	for k := 0; k < count && p+12 <= len(t); k, p = k+1, p+12 {
		if bo.Uint16(t[p:]) != 0x0112 {
			continue
		}
		if bo.Uint16(t[p+2:]) != 3 { // SHORT
			return 1
		}
		if v := int(bo.Uint16(t[p+8:])); v >= 1 && v <= 8 {
			return v
		}
		return 1
	}
	return 1
}

// orientedImage presents src in EXIF display orientation o (2..8) without
// copying pixels. Render recognises it and rotates after downscaling.
type orientedImage struct {
	src image.Image
	o   int
	w   int // display width
	h   int // display height
}

func newOriented(src image.Image, o int) *orientedImage {
	b := src.Bounds()
	w, h := b.Dx(), b.Dy()
	if o >= 5 {
		w, h = h, w
	}
	return &orientedImage{src: src, o: o, w: w, h: h}
}

func (m *orientedImage) ColorModel() color.Model { return m.src.ColorModel() }
func (m *orientedImage) Bounds() image.Rectangle { return image.Rect(0, 0, m.w, m.h) }
func (m *orientedImage) At(x, y int) color.Color {
	if !(image.Point{x, y}.In(m.Bounds())) {
		return color.RGBA{}
	}
	sx, sy := orientMap(m.o, x, y, m.w, m.h)
	min := m.src.Bounds().Min
	return m.src.At(min.X+sx, min.Y+sy)
}

// orientMap maps display pixel (x, y) of a w×h display image to the stored
// pixel for EXIF orientation o.
func orientMap(o, x, y, w, h int) (int, int) {
	switch o {
	case 2: // mirror horizontal
		return w - 1 - x, y
	case 3: // rotate 180
		return w - 1 - x, h - 1 - y
	case 4: // mirror vertical
		return x, h - 1 - y
	case 5: // transpose
		return y, x
	case 6: // rotate 90 CW
		return y, w - 1 - x
	case 7: // transverse
		return h - 1 - y, w - 1 - x
	case 8: // rotate 90 CCW
		return h - 1 - y, x
	}
	return x, y
}

// orientRGBA returns src (stored orientation) in display orientation o.
func orientRGBA(src *image.RGBA, o int) *image.RGBA {
	if o <= 1 || o > 8 {
		return src
	}
	sb := src.Bounds()
	w, h := sb.Dx(), sb.Dy()
	if o >= 5 {
		w, h = h, w
	}
	dst := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		row := dst.Pix[y*dst.Stride : y*dst.Stride+w*4]
		for x := 0; x < w; x++ {
			sx, sy := orientMap(o, x, y, w, h)
			si := src.PixOffset(sb.Min.X+sx, sb.Min.Y+sy)
			copy(row[x*4:x*4+4], src.Pix[si:si+4])
		}
	}
	return dst
}
