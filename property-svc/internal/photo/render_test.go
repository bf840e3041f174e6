package photo

import (
	"bytes"
	"fmt"
	"image"
	"image/color"
	"image/jpeg"
	"math"
	"testing"

	"golang.org/x/image/draw"
)

type size struct{ w, h int }

func TestRenditionTable(t *testing.T) {
	want := []Spec{
		{"original", 2560, 2560, FitInside},
		{"banner", 1600, 750, FitCover},
		{"small", 640, 0, FitWidth},
		{"317_179", 317, 179, FitCover},
		{"h_179", 0, 179, FitHeight},
		{"w_800", 800, 0, FitWidth},
		{"thumbnail", 150, 150, FitCover},
	}
	got := Specs()
	if len(got) != len(want) {
		t.Fatalf("len = %d", len(got))
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("spec %d = %+v, want %+v", i, got[i], want[i])
		}
		if s, ok := Lookup(want[i].Name); !ok || s != want[i] {
			t.Errorf("Lookup(%q) = %+v, %v", want[i].Name, s, ok)
		}
	}
	got[0].Width = 1 // callers get a copy
	if Specs()[0].Width != 2560 {
		t.Fatal("Specs exposes the table")
	}
	if _, ok := Lookup("../etc"); ok {
		t.Fatal("unknown name found")
	}
}

func TestRenderSizes(t *testing.T) {
	// Expected sizes are written out by hand (not computed with the code
	// under test). Proportional renditions never upscale; fixed ones always
	// have their exact size.
	fixed := map[string]size{"banner": {1600, 750}, "317_179": {317, 179}, "thumbnail": {150, 150}}
	tests := []struct {
		name string
		w, h int
		want map[string]size // besides fixed
	}{
		{"landscape 3000x2000", 3000, 2000, map[string]size{
			"original": {2560, 1707}, "small": {640, 427}, "h_179": {269, 179}, "w_800": {800, 533}}},
		{"portrait 1200x1800", 1200, 1800, map[string]size{
			"original": {1200, 1800}, "small": {640, 960}, "h_179": {119, 179}, "w_800": {800, 1200}}},
		{"portrait 1500x3000", 1500, 3000, map[string]size{
			"original": {1280, 2560}, "small": {640, 1280}, "h_179": {90, 179}, "w_800": {800, 1600}}},
		{"small 300x200", 300, 200, map[string]size{
			"original": {300, 200}, "small": {300, 200}, "h_179": {269, 179}, "w_800": {300, 200}}},
		{"tiny 16x16", 16, 16, map[string]size{
			"original": {16, 16}, "small": {16, 16}, "h_179": {16, 16}, "w_800": {16, 16}}},
		{"panorama 6000x600", 6000, 600, map[string]size{
			"original": {2560, 256}, "small": {640, 64}, "h_179": {1790, 179}, "w_800": {800, 80}}},
		{"tall 400x4000", 400, 4000, map[string]size{
			"original": {256, 2560}, "small": {256, 2560}, "h_179": {18, 179}, "w_800": {256, 2560}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := gradient(tc.w, tc.h)
			res, err := Render(src)
			if err != nil {
				t.Fatal(err)
			}
			if res.Width != tc.w || res.Height != tc.h {
				t.Fatalf("result size %dx%d", res.Width, res.Height)
			}
			if len(res.Renditions) != len(Specs()) {
				t.Fatalf("%d renditions", len(res.Renditions))
			}
			for _, s := range Specs() {
				r, ok := res.Renditions[s.Name]
				if !ok {
					t.Fatalf("missing %s", s.Name)
				}
				want, ok := fixed[s.Name]
				if !ok {
					want = tc.want[s.Name]
				}
				if r.Width != want.w || r.Height != want.h {
					t.Errorf("%s: %dx%d, want %dx%d", s.Name, r.Width, r.Height, want.w, want.h)
				}
				if r.Name != s.Name || r.ContentType != "image/jpeg" {
					t.Errorf("%s: name %q content type %q", s.Name, r.Name, r.ContentType)
				}
				out, err := jpeg.Decode(bytes.NewReader(r.Data))
				if err != nil {
					t.Fatalf("%s: output is not a JPEG: %v", s.Name, err)
				}
				if b := out.Bounds(); b.Dx() != want.w || b.Dy() != want.h {
					t.Errorf("%s: encoded %dx%d, want %dx%d", s.Name, b.Dx(), b.Dy(), want.w, want.h)
				}
				checkGeometry(t, s, out, tc.w, tc.h)
			}
			if o := res.Ordered(); len(o) != len(Specs()) || o[0].Name != "original" || o[6].Name != "thumbnail" {
				t.Fatalf("Ordered() wrong")
			}
		})
	}
}

// checkGeometry verifies, using the gradient (R = x, G = y), that a
// rendition shows the right part of the source: proportional renditions the
// whole frame, cover renditions the centered crop.
func checkGeometry(t *testing.T, s Spec, out image.Image, sw, sh int) {
	t.Helper()
	b := out.Bounds()
	// Source region [x0,x1)×[y0,y1), in fractions of the source.
	x0, x1, y0, y1 := 0.0, 1.0, 0.0, 1.0
	if s.Fit == FitCover {
		srcAspect, dstAspect := float64(sw)/float64(sh), float64(s.Width)/float64(s.Height)
		if srcAspect > dstAspect {
			f := dstAspect / srcAspect
			x0, x1 = 0.5-f/2, 0.5+f/2
		} else {
			f := srcAspect / dstAspect
			y0, y1 = 0.5-f/2, 0.5+f/2
		}
	}
	// Sample a few pixels away from the borders (ringing) and compare with
	// the gradient value expected there.
	for _, p := range [][2]float64{{0.1, 0.1}, {0.9, 0.1}, {0.5, 0.5}, {0.1, 0.9}, {0.9, 0.9}} {
		px := int(p[0] * float64(b.Dx()))
		py := int(p[1] * float64(b.Dy()))
		fx := x0 + (float64(px)+0.5)/float64(b.Dx())*(x1-x0)
		fy := y0 + (float64(py)+0.5)/float64(b.Dy())*(y1-y0)
		// Source pixel i (center at (i+0.5)/n) has value 255*i/(n-1).
		val := func(f float64, n int) float64 {
			return math.Max(0, math.Min(255, (f*float64(n)-0.5)*255/float64(n-1)))
		}
		wantR, wantG := val(fx, sw), val(fy, sh)
		r, g, _, _ := out.At(b.Min.X+px, b.Min.Y+py).RGBA()
		// Tolerance: JPEG error plus one source pixel of gradient per
		// output pixel in tiny outputs.
		tolX := 12 + 255.0/float64(b.Dx())*(x1-x0)*2
		tolY := 12 + 255.0/float64(b.Dy())*(y1-y0)*2
		if math.Abs(float64(r>>8)-wantR) > tolX || math.Abs(float64(g>>8)-wantG) > tolY {
			t.Errorf("%s at (%d,%d): R,G = %d,%d, want ≈ %.0f,%.0f", s.Name, px, py, r>>8, g>>8, wantR, wantG)
			return
		}
	}
}

func TestRenderFlattensAlphaOnWhite(t *testing.T) {
	m := image.NewNRGBA(image.Rect(0, 0, 200, 100))
	for y := 0; y < 100; y++ {
		for x := 0; x < 200; x++ {
			if x < 100 { // left: fully transparent (with junk color)
				m.SetNRGBA(x, y, color.NRGBA{0, 0, 0, 0})
			} else { // right: half-transparent pure red
				m.SetNRGBA(x, y, color.NRGBA{255, 0, 0, 128})
			}
		}
	}
	img, _, err := Decode(encodePNG(t, m), Limits{})
	if err != nil {
		t.Fatal(err)
	}
	res, err := Render(img)
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{Original, W800, Thumbnail} {
		out, err := jpeg.Decode(bytes.NewReader(res.Renditions[name].Data))
		if err != nil {
			t.Fatal(err)
		}
		b := out.Bounds()
		left := out.At(b.Min.X+b.Dx()/10, b.Min.Y+b.Dy()/2)
		right := out.At(b.Max.X-1-b.Dx()/10, b.Min.Y+b.Dy()/2)
		if !near(left, 255, 255, 255, 8) {
			t.Errorf("%s: transparent area is %v, want white", name, left)
		}
		if !near(right, 255, 127, 127, 12) {
			t.Errorf("%s: half-transparent red is %v, want pink (255,127,127)", name, right)
		}
	}
}

// The banded two-pass resize must match a single x/image/draw Scale call.
func TestBandedScaleMatchesDirect(t *testing.T) {
	src := gradient(903, 611)
	for _, c := range []struct {
		name   string
		sr     image.Rectangle
		dw, dh int
	}{
		{"down", src.Bounds(), 517, 343},
		{"crop down", image.Rect(101, 37, 801, 600), 211, 170},
		{"up", image.Rect(0, 0, 200, 100), 450, 260},
	} {
		want := image.NewRGBA(image.Rect(0, 0, c.dw, c.dh))
		draw.CatmullRom.Scale(want, want.Bounds(), src, c.sr, draw.Src, nil)
		got := image.NewRGBA(want.Bounds())
		scaleBudget(got, src, c.sr, 7*1024) // forces many bands
		maxDiff := 0
		for i := range want.Pix {
			d := int(want.Pix[i]) - int(got.Pix[i])
			maxDiff = max(maxDiff, d, -d)
		}
		// Only difference: the 8-bit intermediate between the passes.
		if maxDiff > 3 {
			t.Errorf("%s: banded scale differs by up to %d", c.name, maxDiff)
		}
	}
}

// halve must give the same picture for YCbCr (any subsampling) as for
// the same image converted to RGBA.
func TestHalveYCbCr(t *testing.T) {
	const w, h = 203, 101 // odd sizes exercise the edges
	rgb := gradient(w, h)
	for _, ratio := range []image.YCbCrSubsampleRatio{
		image.YCbCrSubsampleRatio444, image.YCbCrSubsampleRatio422, image.YCbCrSubsampleRatio420,
		image.YCbCrSubsampleRatio440, image.YCbCrSubsampleRatio411, image.YCbCrSubsampleRatio410,
	} {
		m := image.NewYCbCr(image.Rect(0, 0, w, h), ratio)
		for y := 0; y < h; y++ {
			for x := 0; x < w; x++ {
				c := rgb.NRGBAAt(x, y)
				yy, cb, cr := color.RGBToYCbCr(c.R, c.G, c.B)
				m.Y[m.YOffset(x, y)] = yy
				m.Cb[m.COffset(x, y)] = cb
				m.Cr[m.COffset(x, y)] = cr
			}
		}
		asRGBA := image.NewRGBA(m.Bounds())
		draw.Draw(asRGBA, asRGBA.Bounds(), m, image.Point{}, draw.Src)
		a, ok1 := halve(m, m.Bounds())
		b, ok2 := halve(asRGBA, asRGBA.Bounds())
		if !ok1 || !ok2 || a.Bounds() != image.Rect(0, 0, w/2, h/2) || b.Bounds() != a.Bounds() {
			t.Fatalf("%v: halve bounds %v %v", ratio, a, b)
		}
		for y := 0; y < h/2; y++ {
			for x := 0; x < w/2; x++ {
				ar, ag, ab, _ := a.At(x, y).RGBA()
				br, bg, bb, _ := b.At(x, y).RGBA()
				for _, d := range []int{int(ar>>8) - int(br>>8), int(ag>>8) - int(bg>>8), int(ab>>8) - int(bb>>8)} {
					if d > 12 || d < -12 {
						t.Fatalf("%v: pixel (%d,%d) YCbCr %v vs RGBA %v", ratio, x, y, a.At(x, y), b.At(x, y))
					}
				}
			}
		}
	}
}

// Large reductions take the box-halving shortcut; the result must stay
// close to a plain Catmull-Rom resize.
func TestScaleWithHalvingMatchesDirect(t *testing.T) {
	src := sourceJPEG(t, 1300, 910)
	want := image.NewRGBA(image.Rect(0, 0, 300, 210))
	draw.CatmullRom.Scale(want, want.Bounds(), src, src.Bounds(), draw.Src, nil)
	got := image.NewRGBA(want.Bounds())
	scale(got, src, src.Bounds())
	var sum, n float64
	for i := range want.Pix {
		d := math.Abs(float64(want.Pix[i]) - float64(got.Pix[i]))
		sum += d
		n++
		if d > 24 {
			t.Fatalf("byte %d differs by %v", i, d)
		}
	}
	if mean := sum / n; mean > 2 {
		t.Fatalf("mean difference %.2f", mean)
	}
}

func TestRenderRejectsEmpty(t *testing.T) {
	if _, err := Render(image.NewRGBA(image.Rect(0, 0, 0, 0))); err == nil {
		t.Fatal("no error for empty image")
	}
}

// sourceJPEG returns a decoded JPEG (YCbCr 4:2:0, like real uploads).
func sourceJPEG(b testing.TB, w, h int) image.Image {
	data := encodeJPEG(b, gradient(w, h))
	img, _, err := Decode(data, Limits{})
	if err != nil {
		b.Fatal(err)
	}
	if _, ok := img.(*image.YCbCr); !ok {
		b.Fatalf("decoded %T", img)
	}
	return img
}

func BenchmarkRender(b *testing.B) {
	for _, s := range []size{{3000, 2000}, {4000, 3000}} {
		img := sourceJPEG(b, s.w, s.h)
		b.Run(fmtSize(s), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := Render(img); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

func fmtSize(s size) string { return fmt.Sprintf("%dx%d", s.w, s.h) }
