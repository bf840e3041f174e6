package photo

import (
	"encoding/binary"
	"image"
	"math"
	"strconv"
)

// The memory one photo takes is read from its header, before anything is decoded
// (docs/photos.md, "Memory"). Need is a bound on every byte Decode and Render allocate for
// the image (its pixels as the decoder stores them, the decoder's scratch, the resized
// frames, the encoded renditions), so that it also bounds the most they hold at once.

// DefaultMemory is the default of Limits.Memory: the bytes all photos being decoded and
// rendered at once may take in one property-svc replica, and so the most one photo may
// take. It fits property-svc's 512 MiB container (GOMEMLIMIT 460 MiB) with 204 MiB left
// for everything else, request bodies included, and admits every baseline JPEG up to the
// 40-megapixel limit (docs/photos.md, "Memory").
const DefaultMemory = 256 << 20

// Need is what one image takes to decode and render, read from its header by Inspect.
type Need struct {
	Format        Format
	Width, Height int // as stored (before EXIF orientation)
	// BytesPerPixel is what the decoder stores per pixel (the image type it returns, e.g.
	// 8 for 16-bit RGBA PNG, 1.5 for 4:2:0 JPEG), without its scratch.
	BytesPerPixel float64
	Decoded       int64 // bytes the decoder allocates: pixels, scratch, conversions
	Render        int64 // bytes Render allocates on top: resized frames, encoded renditions
	Bytes         int64 // Decoded + Render + fixedOverhead: the weight of the photo

	kind        pixKind
	ratio       image.YCbCrSubsampleRatio // for kindYCbCr
	orientation int                       // JPEG EXIF orientation, 1 if none
}

// pixKind is the type of image the decoder returns, as far as Render's cost depends on it.
type pixKind int

const (
	kindOther pixKind = iota // no fast path: converted band by band
	kindRGBA                 // *image.RGBA: halved in place of a first resize
	kindYCbCr                // full-frame *image.YCbCr: halved too
)

// fixedOverhead covers what does not grow with the image: decoder and encoder state
// (Huffman and quantisation tables, zlib windows, bufio buffers), the resizer's
// per-call weight tables beyond what scaleAlloc counts, and the resizer's 1 MiB
// scratch buffers, which its pool may drop and make again when the GC runs mid-render.
const fixedOverhead = 6 << 20

// encodedPerPixel bounds the JPEG bytes of one rendition per pixel at Quality (pure noise
// at quality 85 with 4:2:0 chroma is about 1.2; photos are well under 0.5).
const encodedPerPixel = 2

func mib(n int64) int64 { return (n + 1<<20 - 1) >> 20 }

func formatBPP(b float64) string {
	return strconv.FormatFloat(math.Round(b*100)/100, 'f', -1, 64)
}

// tooMuchMemory is the refusal of an image whose Need exceeds the most one photo may take.
func tooMuchMemory(n Need, most int64) error {
	return newErr(ErrTooLarge, nil, "%dx%d pixels at %s bytes per pixel would take %d MiB to decode and render; the most is %d MiB",
		n.Width, n.Height, formatBPP(n.BytesPerPixel), mib(n.Bytes), most>>20)
}

// need computes n's Decoded, Render and Bytes from its format's header; cfg is the
// already checked header (dimensions) and data the whole file.
func need(format Format, w, h int, data []byte) Need {
	n := Need{Format: format, Width: w, Height: h, orientation: 1}
	switch format {
	case PNG:
		pngNeed(&n, data)
	case JPEG:
		jpegNeed(&n, data)
		n.orientation = jpegOrientation(data)
	case GIF:
		gifNeed(&n, data)
	case WebP:
		webpNeed(&n, data)
	}
	n.Render = renderAlloc(n)
	n.Bytes = n.Decoded + n.Render + fixedOverhead
	return n
}

func area(w, h int) int64 { return int64(w) * int64(h) }

// pngNeed: what image/png allocates. Its decoder returns Gray (1 byte per pixel) for gray
// of up to 8 bits, Gray16 (2) for 16-bit gray, Paletted (1) for every palette depth, RGBA
// (4) for 8-bit RGB, NRGBA (4) for 8-bit gray+alpha and RGBA, RGBA64 (8) for 16-bit RGB and
// NRGBA64 (8) for 16-bit gray+alpha and RGBA. A tRNS chunk turns gray and RGB into NRGBA
// (4) at up to 8 bits and NRGBA64 (8) at 16. An interlaced image is decoded pass by pass,
// each pass into an image of its own merged into the whole: twice the pixels in all. Its
// two row buffers are of the encoded row.
func pngNeed(n *Need, data []byte) {
	var depth, ctype, interlace byte
	trns := false
	for p, first := 8, true; p+8 <= len(data); first = false {
		size := int(binary.BigEndian.Uint32(data[p:]))
		typ := string(data[p+4 : p+8])
		body := data[p+8 : min(len(data), p+8+max(size, 0))]
		if first && typ == "IHDR" && len(body) >= 13 {
			depth, ctype, interlace = body[8], body[9], body[12]
		}
		if typ == "tRNS" {
			trns = true
		}
		if typ == "IDAT" || size < 0 || p+12+size < p {
			break
		}
		p += 12 + size
	}
	bpp, channels := 8.0, 4 // unknown combinations: the most any takes
	n.kind = kindOther
	switch ctype {
	case 0: // gray
		bpp, channels = 1, 1
		if depth == 16 {
			bpp = 2
		}
		if trns { // NRGBA, NRGBA64
			bpp = 4
			if depth == 16 {
				bpp = 8
			}
		}
	case 2: // RGB
		bpp, channels = 4, 3
		if depth == 16 {
			bpp = 8
		}
		if depth == 8 && !trns {
			n.kind = kindRGBA
		}
	case 3: // paletted
		bpp, channels = 1, 1
	case 4: // gray + alpha
		bpp, channels = 4, 2
		if depth == 16 {
			bpp = 8
		}
	case 6: // RGBA
		bpp, channels = 4, 4
		if depth == 16 {
			bpp = 8
		}
	}
	n.BytesPerPixel = bpp
	pixels := int64(bpp * float64(area(n.Width, n.Height)))
	rows := 2 * (1 + (int64(n.Width)*int64(channels)*int64(max(depth, 1))+7)/8)
	n.Decoded = pixels + rows
	if interlace != 0 {
		n.Decoded = 2*pixels + 7*rows
	}
}

// jpegNeed: what image/jpeg allocates. The image is allocated whole at the size rounded up
// to whole MCUs: Gray (1 byte per pixel) for one component, YCbCr for three (the luma
// plane plus two chroma planes of the subsampling: 3 bytes per pixel at 4:4:4, 2 at 4:2:2
// and 4:4:0, 1.5 at 4:2:0 and 4:1:1, 1.25 at 4:1:0) and YCbCr plus a black plane for four.
// Four components (CMYK, YCCK) are then converted into a CMYK image (4 more), three that
// are RGB (Adobe transform 0, or components named R, G, B without JFIF) into an RGBA
// image (4 more). A progressive JPEG also keeps every DCT coefficient until its last scan:
// 256 bytes per 8x8 block of each component, 4 bytes per sample.
func jpegNeed(n *Need, data []byte) {
	type comp struct{ id, h, v int }
	var comps []comp
	jfif, adobe, transform, progressive := false, false, byte(0), false
	for i := 2; i+4 <= len(data); {
		if data[i] != 0xFF {
			break
		}
		marker := data[i+1]
		if marker == 0xFF {
			i++
			continue
		}
		if marker == 0x01 || (marker >= 0xD0 && marker <= 0xD8) {
			i += 2
			continue
		}
		if marker == 0xDA || marker == 0xD9 {
			break
		}
		size := int(data[i+2])<<8 | int(data[i+3])
		if size < 2 || i+2+size > len(data) {
			break
		}
		seg := data[i+4 : i+2+size]
		switch {
		case marker == 0xE0 && len(seg) >= 5 && string(seg[:5]) == "JFIF\x00":
			jfif = true
		case marker == 0xEE && len(seg) >= 12 && string(seg[:5]) == "Adobe":
			adobe, transform = true, seg[11]
		case (marker == 0xC0 || marker == 0xC1 || marker == 0xC2) && len(seg) >= 6 && comps == nil:
			progressive = marker == 0xC2
			nc := int(seg[5])
			for k := 0; k < nc && 6+3*k+2 < len(seg); k++ {
				hv := seg[6+3*k+1]
				comps = append(comps, comp{id: int(seg[6+3*k]), h: int(hv >> 4), v: int(hv & 0x0f)})
			}
		}
		i += 2 + size
	}
	w, h := n.Width, n.Height
	valid := len(comps) == 1 || len(comps) == 3 || len(comps) == 4
	for _, c := range comps {
		valid = valid && c.h >= 1 && c.h <= 4 && c.v >= 1 && c.v <= 4
	}
	if !valid { // the decoder refuses it; count the most a 4-component progressive takes
		n.kind, n.BytesPerPixel = kindOther, 4
		n.Decoded = (3+1+4+16)*area(w, h) + 4<<20
		return
	}
	if len(comps) == 1 {
		comps[0].h, comps[0].v = 1, 1 // the decoder ignores them for gray
	}
	h0, v0 := comps[0].h, comps[0].v
	mxx, myy := (w+8*h0-1)/(8*h0), (h+8*v0-1)/(8*v0)
	pw, ph := 8*h0*mxx, 8*v0*myy // the allocated (MCU-padded) size
	var pixels int64
	switch len(comps) {
	case 1:
		n.kind, n.BytesPerPixel = kindOther, 1
		pixels = area(pw, ph)
	default:
		n.ratio = subsampleRatio(h0/comps[1].h, v0/comps[1].v)
		cw, ch := chromaPlane(pw, ph, n.ratio)
		pixels = area(pw, ph) + 2*area(cw, ch)
		cw, ch = chromaPlane(w, h, n.ratio)
		n.BytesPerPixel = 1 + 2*float64(area(cw, ch))/float64(area(w, h))
		n.kind = kindYCbCr
		if len(comps) == 4 {
			pixels += area(8*comps[3].h*mxx, 8*comps[3].v*myy) + 4*area(w, h)
			n.kind, n.BytesPerPixel = kindOther, 4
		} else if !jfif && ((adobe && transform == 0) || (comps[0].id == 'R' && comps[1].id == 'G' && comps[2].id == 'B')) {
			pixels += 4 * area(w, h)
			n.kind, n.BytesPerPixel = kindRGBA, 4
		}
	}
	n.Decoded = pixels
	if progressive {
		for _, c := range comps {
			n.Decoded += 256 * int64(mxx*c.h) * int64(myy*c.v)
		}
	}
}

func subsampleRatio(h, v int) image.YCbCrSubsampleRatio {
	switch h<<4 | v {
	case 0x12:
		return image.YCbCrSubsampleRatio440
	case 0x21:
		return image.YCbCrSubsampleRatio422
	case 0x22:
		return image.YCbCrSubsampleRatio420
	case 0x41:
		return image.YCbCrSubsampleRatio411
	case 0x42:
		return image.YCbCrSubsampleRatio410
	}
	return image.YCbCrSubsampleRatio444 // and what the decoder refuses
}

// chromaPlane is the size of each chroma plane of a w×h YCbCr image (image.NewYCbCr).
func chromaPlane(w, h int, r image.YCbCrSubsampleRatio) (int, int) {
	m := image.YCbCr{Rect: image.Rect(0, 0, w, h), SubsampleRatio: r}
	return chromaSize(&m)
}

// gifNeed: image/gif decodes the first frame into a Paletted image of the frame's size (1
// byte per pixel), de-interlacing it into a second one if it is interlaced; Decode
// composites a frame that does not cover the whole screen onto an NRGBA canvas of the
// screen (4 bytes per pixel).
func gifNeed(n *Need, data []byte) {
	n.kind, n.BytesPerPixel = kindOther, 1
	fw, fh, full, interlaced, ok := gifFirstFrame(data)
	if !ok { // no frame found: the decoder will refuse it; count the most it could take
		fw, fh, full, interlaced = n.Width, n.Height, false, true
	}
	n.Decoded = area(fw, fh)
	if interlaced {
		n.Decoded *= 2
	}
	if !full {
		n.Decoded += 4 * area(n.Width, n.Height)
		n.BytesPerPixel = 4
	}
}

// gifFirstFrame reads the first image descriptor of a GIF: the frame's size, whether it
// is the whole logical screen, and whether it is interlaced.
func gifFirstFrame(d []byte) (w, h int, full, interlaced, ok bool) {
	if len(d) < 13 {
		return 0, 0, false, false, false
	}
	sw, sh := int(binary.LittleEndian.Uint16(d[6:])), int(binary.LittleEndian.Uint16(d[8:]))
	p := 13
	if d[10]&0x80 != 0 {
		p += 3 << (d[10]&7 + 1)
	}
	for p < len(d) {
		switch d[p] {
		case 0x2C: // image descriptor
			if p+10 > len(d) {
				return 0, 0, false, false, false
			}
			x, y := int(binary.LittleEndian.Uint16(d[p+1:])), int(binary.LittleEndian.Uint16(d[p+3:]))
			w, h = int(binary.LittleEndian.Uint16(d[p+5:])), int(binary.LittleEndian.Uint16(d[p+7:]))
			return w, h, x == 0 && y == 0 && w == sw && h == sh, d[p+9]&0x40 != 0, true
		case 0x21: // extension: label, then sub-blocks up to an empty one
			p += 2
			for p < len(d) && d[p] != 0 {
				p += 1 + int(d[p])
			}
			p++
		default: // trailer or garbage
			return 0, 0, false, false, false
		}
	}
	return 0, 0, false, false, false
}

// webpNeed: golang.org/x/image/webp decodes lossy WebP into a 4:2:0 YCbCr image padded to
// 16x16 macroblocks (1.5 bytes per pixel) after reading the whole VP8 frame into memory;
// lossless WebP into NRGBA (4), plus, at most, the colour-indexed pixels before they are
// unpacked (2 more) and the transforms' and entropy codes' subsampled images (1 more). An
// alpha channel is a plane of 1 byte per pixel, decoded as a lossless image first when it
// is compressed.
func webpNeed(n *Need, data []byte) {
	w, h := n.Width, n.Height
	lossless, alpha, alphaCompressed := false, false, false
	for p := 12; p+8 <= len(data); {
		fourcc, size := string(data[p:p+4]), int64(binary.LittleEndian.Uint32(data[p+4:]))
		switch fourcc {
		case "VP8L":
			lossless = true
		case "ALPH":
			alpha = true
			alphaCompressed = p+8 >= len(data) || data[p+8]&3 != 0
		}
		if size > int64(len(data)) {
			break
		}
		p += 8 + int(size) + int(size&1)
	}
	const losslessBPP = 4 + 2 + 1
	if lossless {
		n.kind, n.BytesPerPixel = kindOther, 4
		n.Decoded = losslessBPP * area(w, h)
		return
	}
	mbw, mbh := (w+15)/16, (h+15)/16
	n.Decoded = 384*int64(mbw)*int64(mbh) + int64(len(data))
	n.kind, n.BytesPerPixel = kindYCbCr, 1.5
	n.ratio = image.YCbCrSubsampleRatio420
	if alpha {
		n.kind, n.BytesPerPixel = kindOther, 2.5 // NYCbCrA
		n.Decoded += area(w, h)
		if alphaCompressed {
			n.Decoded += losslessBPP * area(w, h)
		}
	}
}

// renderAlloc bounds what Render allocates for n's decoded image: it follows Render's
// steps (makeBase, then each rendition from the smallest frame that will do) with the
// same size rules.
func renderAlloc(n Need) int64 {
	w, h := n.Width, n.Height // stored orientation
	dispW, dispH := w, h
	if n.orientation >= 5 {
		dispW, dispH = h, w
	}
	// makeBase: scaled in stored orientation, rotated after.
	bw, bh := fitInside(dispW, dispH, specs[0].Width, specs[0].Height)
	sbw, sbh := bw, bh
	if n.orientation >= 5 {
		sbw, sbh = bh, bw
	}
	total := 4 * area(bw, bh)
	if sbw != w || sbh != h {
		total += scaleAlloc(sbw, sbh, w, h, n.kind, n.ratio)
	}
	if n.orientation > 1 {
		total += 4 * area(bw, bh)
	}
	// The renditions.
	frames := []image.Point{{bw, bh}}
	for _, s := range renderOrder(dispW, dispH, bw, bh) {
		tw, th := targetSize(s, dispW, dispH, bw, bh)
		cover := s.Fit == FitCover
		pick := frames[pickFrame(frames, cover, tw, th)]
		sr := image.Rect(0, 0, pick.X, pick.Y)
		if cover {
			sr = coverRect(pick.X, pick.Y, tw, th)
		}
		if sr.Dx() != tw || sr.Dy() != th {
			total += 4*area(tw, th) + scaleAlloc(tw, th, sr.Dx(), sr.Dy(), kindRGBA, 0)
			if !cover {
				frames = append(frames, image.Pt(tw, th))
			}
		}
		// The encoded rendition, and as much again for the buffer it is encoded in.
		total += 2 * encodedPerPixel * area(tw, th)
	}
	return total
}

// scaleAlloc bounds what scale allocates to resize sw×sh of an image of kind k into dw×dh.
func scaleAlloc(dw, dh, sw, sh int, k pixKind, r image.YCbCrSubsampleRatio) int64 {
	var total int64
	for (k == kindRGBA || k == kindYCbCr) && sw >= reduceGap*dw && sh >= reduceGap*dh {
		sw, sh = sw/2, sh/2
		if k == kindRGBA {
			total += 4 * area(sw, sh)
		} else {
			cw, ch := chromaPlane(sw, sh, r)
			total += area(sw, sh) + 2*area(cw, ch)
		}
	}
	if int64(dw)*int64(sh)*32 <= tmpBudget {
		return total + kernelAlloc(dw, dh, sw, sh)
	}
	total += 4 * area(dw, sh) // mid
	rows := max(1, tmpBudget/(dw*32))
	total += 2 * kernelAlloc(dw, rows, sw, rows) // the band scaler and the last band
	if k != kindRGBA {
		total += 4 * area(sw, rows) // band
	}
	cols := max(1, tmpBudget/(sh*32))
	total += 2 * kernelAlloc(cols, dh, cols, sh)
	return total
}

// kernelAlloc is what one x/image/draw Catmull-Rom scaler of sw×sh into dw×dh allocates:
// its float64 scratch (32 bytes a destination column per source row) and its weight
// tables (24 bytes a destination column or row, 16 a tap, at most 4 taps a source pixel
// and 5 a destination pixel).
func kernelAlloc(dw, dh, sw, sh int) int64 {
	weights := func(d, s int) int64 { return 24*int64(d) + 16*(4*int64(s)+5*int64(d)) }
	return 32*area(dw, sh) + weights(dw, sw) + weights(dh, sh)
}
