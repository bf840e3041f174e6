package photo

import (
	"bytes"
	"errors"
	"fmt"
	"image"
	stddraw "image/draw"
	"image/jpeg"
	"math"
	"slices"
	"sort"

	"golang.org/x/image/draw"
)

// Output encoding of every rendition.
const (
	ContentType = "image/jpeg"
	Ext         = ".jpg" // renditions are served as /media/<key>/<name>.jpg
	Quality     = 85
)

// Fit says how a rendition is derived from the (oriented) image.
type Fit int

const (
	// FitInside: within Width×Height, aspect kept, never upscaled.
	FitInside Fit = iota + 1
	// FitWidth: Width wide, height proportional, never upscaled.
	FitWidth
	// FitHeight: Height high, width proportional, never upscaled.
	FitHeight
	// FitCover: exactly Width×Height; scaled to cover the box (upscaling
	// small images if needed), then center-cropped.
	FitCover
)

func (f Fit) String() string {
	switch f {
	case FitInside:
		return "inside"
	case FitWidth:
		return "width"
	case FitHeight:
		return "height"
	case FitCover:
		return "cover"
	}
	return fmt.Sprintf("Fit(%d)", int(f))
}

// Spec is one row of the rendition table. Width or Height is 0 when that
// side is proportional.
type Spec struct {
	Name   string
	Width  int
	Height int
	Fit    Fit
}

// Rendition names.
const (
	Original  = "original"
	Banner    = "banner"
	Small     = "small"
	R317x179  = "317_179"
	H179      = "h_179"
	W800      = "w_800"
	Thumbnail = "thumbnail"
)

// specs is THE rendition table; everything else iterates it.
var specs = [...]Spec{
	{Original, 2560, 2560, FitInside},
	{Banner, 1600, 750, FitCover},
	{Small, 640, 0, FitWidth},
	{R317x179, 317, 179, FitCover},
	{H179, 0, 179, FitHeight},
	{W800, 800, 0, FitWidth},
	{Thumbnail, 150, 150, FitCover},
}

// Specs returns a copy of the rendition table in canonical order.
func Specs() []Spec { return slices.Clone(specs[:]) }

// Names returns the rendition names in canonical order.
func Names() []string {
	names := make([]string, len(specs))
	for i, s := range specs {
		names[i] = s.Name
	}
	return names
}

// Lookup returns the spec for a rendition name (e.g. from a media URL).
func Lookup(name string) (Spec, bool) {
	for _, s := range specs {
		if s.Name == name {
			return s, true
		}
	}
	return Spec{}, false
}

// Rendition is one encoded output.
type Rendition struct {
	Name        string
	Data        []byte
	Width       int
	Height      int
	ContentType string
}

// Result holds all renditions of one photo.
type Result struct {
	Width, Height int // the decoded image in display orientation
	Renditions    map[string]Rendition
}

// Ordered returns the renditions in table order.
func (r *Result) Ordered() []Rendition {
	out := make([]Rendition, 0, len(specs))
	for _, s := range specs {
		if v, ok := r.Renditions[s.Name]; ok {
			out = append(out, v)
		}
	}
	return out
}

// Render produces every rendition of the table from img (normally the result
// of Load or Decode). The image is first brought to the "original" size
// (long side at most 2560, alpha flattened on white, EXIF orientation
// applied), and every other rendition is derived from the smallest already
// computed full-frame image that still has enough pixels, so a big photo is
// only resampled once at full resolution. Downscaling uses Catmull-Rom.
func Render(img image.Image) (*Result, error) {
	if img == nil {
		return nil, errors.New("photo: nil image")
	}
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	if w < 1 || h < 1 {
		return nil, errors.New("photo: empty image")
	}
	orig, ok := Lookup(Original)
	if !ok || orig.Fit != FitInside {
		return nil, errors.New("photo: rendition table lacks a FitInside original")
	}

	base := makeBase(img, orig.Width, orig.Height)
	bw, bh := base.Bounds().Dx(), base.Bounds().Dy()

	order := renderOrder(w, h, bw, bh)
	frames := []*image.RGBA{base} // full-frame (uncropped) images, any size
	res := &Result{Width: w, Height: h, Renditions: make(map[string]Rendition, len(specs))}
	var buf bytes.Buffer
	for _, s := range order {
		tw, th := targetSize(s, w, h, bw, bh)
		out := derive(frames, s.Fit == FitCover, tw, th)
		if s.Fit != FitCover && !slices.Contains(frames, out) {
			frames = append(frames, out)
		}
		buf.Reset()
		if err := jpeg.Encode(&buf, out, &jpeg.Options{Quality: Quality}); err != nil {
			return nil, fmt.Errorf("photo: encode %s: %w", s.Name, err)
		}
		res.Renditions[s.Name] = Rendition{
			Name:        s.Name,
			Data:        bytes.Clone(buf.Bytes()),
			Width:       tw,
			Height:      th,
			ContentType: ContentType,
		}
	}
	return res, nil
}

// renderOrder is the rendition table in the order Render makes them for a w×h image whose
// original rendition is bw×bh: big outputs first, so small ones can derive from them.
func renderOrder(w, h, bw, bh int) []Spec {
	order := Specs()
	sort.SliceStable(order, func(i, j int) bool {
		wi, hi := targetSize(order[i], w, h, bw, bh)
		wj, hj := targetSize(order[j], w, h, bw, bh)
		return wi*hi > wj*hj
	})
	return order
}

// targetSize is the output size of s for an image of w×h whose original
// rendition (base) is bw×bh. Proportional sizes are computed from the real
// aspect ratio and never exceed the base.
func targetSize(s Spec, w, h, bw, bh int) (int, int) {
	switch s.Fit {
	case FitCover:
		return s.Width, s.Height
	case FitWidth:
		tw := min(s.Width, bw)
		return tw, clamp(int(math.Round(float64(h)*float64(tw)/float64(w))), 1, bh)
	case FitHeight:
		th := min(s.Height, bh)
		return clamp(int(math.Round(float64(w)*float64(th)/float64(h))), 1, bw), th
	default: // FitInside
		tw, th := fitInside(w, h, s.Width, s.Height)
		return min(tw, bw), min(th, bh)
	}
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

// fitInside scales w×h down (never up) to fit in maxW×maxH.
func fitInside(w, h, maxW, maxH int) (int, int) {
	if w <= maxW && h <= maxH {
		return w, h
	}
	f := math.Min(float64(maxW)/float64(w), float64(maxH)/float64(h))
	return max(1, int(math.Round(float64(w)*f))), max(1, int(math.Round(float64(h)*f)))
}

// coverRect is the centered region of a cw×ch frame with the aspect of tw×th.
func coverRect(cw, ch, tw, th int) image.Rectangle {
	if int64(cw)*int64(th) > int64(ch)*int64(tw) { // frame is wider
		w := min(cw, max(1, int(math.Round(float64(ch)*float64(tw)/float64(th)))))
		x0 := (cw - w) / 2
		return image.Rect(x0, 0, x0+w, ch)
	}
	h := min(ch, max(1, int(math.Round(float64(cw)*float64(th)/float64(tw)))))
	y0 := (ch - h) / 2
	return image.Rect(0, y0, cw, y0+h)
}

// derive renders a tw×th image from the smallest frame that needs no
// upscaling (frames[0] is the largest and the fallback).
func derive(frames []*image.RGBA, cover bool, tw, th int) *image.RGBA {
	sizes := make([]image.Point, len(frames))
	for i, f := range frames {
		sizes[i] = f.Bounds().Size()
	}
	pick := frames[pickFrame(sizes, cover, tw, th)]
	fw, fh := pick.Bounds().Dx(), pick.Bounds().Dy()
	sr := pick.Bounds()
	if cover {
		sr = coverRect(fw, fh, tw, th)
	}
	if sr.Dx() == tw && sr.Dy() == th {
		if sr == pick.Bounds() {
			return pick
		}
		return pick.SubImage(sr).(*image.RGBA)
	}
	dst := image.NewRGBA(image.Rect(0, 0, tw, th))
	scale(dst, pick, sr)
	return dst
}

// pickFrame is the index of the smallest of the frames (their sizes) from which a tw×th
// output (cover: a center crop) needs no upscaling; 0, the largest, if none.
func pickFrame(frames []image.Point, cover bool, tw, th int) int {
	pick, pickArea := 0, -1
	for i, f := range frames {
		r := image.Rect(0, 0, f.X, f.Y)
		if cover {
			r = coverRect(f.X, f.Y, tw, th)
		}
		if r.Dx() < tw || r.Dy() < th {
			continue
		}
		if a := f.X * f.Y; pickArea < 0 || a < pickArea {
			pick, pickArea = i, a
		}
	}
	return pick
}

// makeBase returns img at most maxW×maxH, opaque (flattened on white) and in
// display orientation, as a fresh *image.RGBA.
func makeBase(img image.Image, maxW, maxH int) *image.RGBA {
	raw, o := img, 1
	if oi, ok := img.(*orientedImage); ok {
		raw, o = oi.src, oi.o
	}
	b := img.Bounds()
	dw, dh := fitInside(b.Dx(), b.Dy(), maxW, maxH)
	if o >= 5 { // scale in stored orientation, rotate the small result
		dw, dh = dh, dw
	}
	rb := raw.Bounds()
	base := image.NewRGBA(image.Rect(0, 0, dw, dh))
	if dw == rb.Dx() && dh == rb.Dy() {
		stddraw.Draw(base, base.Bounds(), raw, rb.Min, stddraw.Src)
	} else {
		scale(base, raw, rb)
	}
	if op, ok := raw.(interface{ Opaque() bool }); !ok || !op.Opaque() {
		flattenOnWhite(base)
	}
	return orientRGBA(base, o)
}

// flattenOnWhite composites premultiplied RGBA over white, in place.
func flattenOnWhite(m *image.RGBA) {
	b := m.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		i0 := m.PixOffset(b.Min.X, y)
		row := m.Pix[i0 : i0+b.Dx()*4]
		for i := 0; i < len(row); i += 4 {
			a := row[i+3]
			if a == 0xff {
				continue
			}
			t := int(0xff - a)
			row[i+0] = uint8(min(0xff, int(row[i+0])+t))
			row[i+1] = uint8(min(0xff, int(row[i+1])+t))
			row[i+2] = uint8(min(0xff, int(row[i+2])+t))
			row[i+3] = 0xff
		}
	}
}

// tmpBudget bounds the float64 scratch buffer of x/image/draw's kernel
// scaler, which is dstW*srcH*32 bytes for a single Scale call (245 MB for a
// 4000×3000 → 2560×1920 resize). 1 MiB bands also keep it cache-resident,
// which makes the banded path faster than one big call.
const tmpBudget = 1 << 20

// reduceGap: while the source is at least this many times larger than the
// destination on both axes, it is first halved with an exact 2×2 box
// average (cheap integer work), so the Catmull-Rom pass that follows works
// on fewer pixels but still reduces by at least 1.5× (same idea as libvips'
// shrink+reduce and Pillow's reducing_gap).
const reduceGap = 3

// scale resamples src's sr into all of dst with Catmull-Rom.
func scale(dst *image.RGBA, src image.Image, sr image.Rectangle) {
	dw, dh := dst.Bounds().Dx(), dst.Bounds().Dy()
	for sr.Dx() >= reduceGap*dw && sr.Dy() >= reduceGap*dh {
		half, ok := halve(src, sr)
		if !ok {
			break
		}
		src, sr = half, half.Bounds()
	}
	scaleBudget(dst, src, sr, tmpBudget)
}

// scaleBudget is a Catmull-Rom resize of src's sr into dst. Large jobs are
// done as a horizontal then a vertical pass, each in bands: with one axis at
// scale 1 the kernel is the identity on that axis, so banding is exact and
// the scratch memory stays under budget. Non-RGBA sources (e.g. YCbCr from
// JPEG) are converted band by band first, which is cheaper than converting
// colours inside the kernel for every tap.
func scaleBudget(dst *image.RGBA, src image.Image, sr image.Rectangle, budget int) {
	dr := dst.Bounds()
	dw, dh, sw, sh := dr.Dx(), dr.Dy(), sr.Dx(), sr.Dy()
	if dw*sh*32 <= budget {
		draw.CatmullRom.Scale(dst, dr, src, sr, draw.Src, nil)
		return
	}
	// Horizontal pass: sw×sh → dw×sh, in bands of rows.
	mid := image.NewRGBA(image.Rect(0, 0, dw, sh))
	rows := max(1, budget/(dw*32))
	hs := draw.CatmullRom.NewScaler(dw, rows, sw, rows)
	var band *image.RGBA
	if _, ok := src.(*image.RGBA); !ok {
		band = image.NewRGBA(image.Rect(0, 0, sw, rows))
	}
	for y := 0; y < sh; y += rows {
		n := min(rows, sh-y)
		d := image.Rect(0, y, dw, y+n)
		bsrc, s := src, image.Rect(sr.Min.X, sr.Min.Y+y, sr.Max.X, sr.Min.Y+y+n)
		if band != nil {
			stddraw.Draw(band, image.Rect(0, 0, sw, n), src, s.Min, stddraw.Src)
			bsrc, s = band, image.Rect(0, 0, sw, n)
		}
		if n == rows {
			hs.Scale(mid, d, bsrc, s, draw.Src, nil)
		} else {
			draw.CatmullRom.Scale(mid, d, bsrc, s, draw.Src, nil)
		}
	}
	// Vertical pass: dw×sh → dw×dh, in bands of columns.
	cols := max(1, budget/(sh*32))
	vs := draw.CatmullRom.NewScaler(cols, dh, cols, sh)
	for x := 0; x < dw; x += cols {
		n := min(cols, dw-x)
		d := image.Rect(dr.Min.X+x, dr.Min.Y, dr.Min.X+x+n, dr.Max.Y)
		s := image.Rect(x, 0, x+n, sh)
		if n == cols {
			vs.Scale(dst, d, mid, s, draw.Src, nil)
		} else {
			draw.CatmullRom.Scale(dst, d, mid, s, draw.Src, nil)
		}
	}
}

// halve box-averages src's sr by 2 on both axes (odd last rows/columns are
// dropped). It supports *image.RGBA (any sr) and full-frame *image.YCbCr.
func halve(src image.Image, sr image.Rectangle) (image.Image, bool) {
	switch m := src.(type) {
	case *image.RGBA:
		w, h := sr.Dx()/2, sr.Dy()/2
		out := image.NewRGBA(image.Rect(0, 0, w, h))
		for y := 0; y < h; y++ {
			r0 := m.Pix[m.PixOffset(sr.Min.X, sr.Min.Y+2*y):]
			r1 := m.Pix[m.PixOffset(sr.Min.X, sr.Min.Y+2*y+1):]
			o := out.Pix[y*out.Stride : y*out.Stride+w*4]
			for i := 0; i < len(o); i++ {
				j := i&^3<<1 | i&3 // byte i of pixel x → byte of pixel 2x
				o[i] = uint8((uint(r0[j]) + uint(r0[j+4]) + uint(r1[j]) + uint(r1[j+4]) + 2) >> 2)
			}
		}
		return out, true
	case *image.YCbCr:
		if sr != m.Rect || m.Rect.Min != (image.Point{}) {
			return nil, false
		}
		w, h := sr.Dx()/2, sr.Dy()/2
		out := image.NewYCbCr(image.Rect(0, 0, w, h), m.SubsampleRatio)
		halvePlane(out.Y, out.YStride, w, h, m.Y, m.YStride, sr.Dx(), sr.Dy())
		cw, ch := chromaSize(out)
		scw, sch := chromaSize(m)
		halvePlane(out.Cb, out.CStride, cw, ch, m.Cb, m.CStride, scw, sch)
		halvePlane(out.Cr, out.CStride, cw, ch, m.Cr, m.CStride, scw, sch)
		return out, true
	}
	return nil, false
}

// chromaSize is the size of the Cb and Cr planes of m (Rect.Min must be 0).
func chromaSize(m *image.YCbCr) (int, int) {
	w, h := m.Rect.Dx(), m.Rect.Dy()
	switch m.SubsampleRatio {
	case image.YCbCrSubsampleRatio422:
		return (w + 1) / 2, h
	case image.YCbCrSubsampleRatio420:
		return (w + 1) / 2, (h + 1) / 2
	case image.YCbCrSubsampleRatio440:
		return w, (h + 1) / 2
	case image.YCbCrSubsampleRatio411:
		return (w + 3) / 4, h
	case image.YCbCrSubsampleRatio410:
		return (w + 3) / 4, (h + 1) / 2
	}
	return w, h
}

// halvePlane fills dst (w×h) with 2×2 averages of src (sw×sh), clamping
// source coordinates at the edges.
func halvePlane(dst []byte, dstStride, w, h int, src []byte, srcStride, sw, sh int) {
	for y := 0; y < h; y++ {
		y0 := min(2*y, sh-1)
		y1 := min(2*y+1, sh-1)
		r0 := src[y0*srcStride:]
		r1 := src[y1*srcStride:]
		o := dst[y*dstStride:]
		for x := 0; x < w; x++ {
			x0 := min(2*x, sw-1)
			x1 := min(2*x+1, sw-1)
			o[x] = uint8((uint(r0[x0]) + uint(r0[x1]) + uint(r1[x0]) + uint(r1[x1]) + 2) >> 2)
		}
	}
}
