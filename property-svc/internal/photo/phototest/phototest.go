// Package phototest makes test images for property-svc's photo tests: in particular large
// PNGs of zero pixels, written row by row so that making one never holds its pixels (a
// 6324x6324 16-bit RGBA image is 320 MB decoded and about 310 KB as a PNG).
package phototest

import (
	"bytes"
	"compress/zlib"
	"encoding/binary"
	"hash/crc32"
)

// PNG colour types (the IHDR's colour type byte).
const (
	Gray      = 0
	RGB       = 2
	Paletted  = 3
	GrayAlpha = 4
	RGBA      = 6
)

// channels is the number of samples per pixel of a colour type.
func channels(colorType byte) int {
	switch colorType {
	case RGB:
		return 3
	case GrayAlpha:
		return 2
	case RGBA:
		return 4
	}
	return 1 // Gray, Paletted
}

// ZeroPNG is ZeroPNGInterlaced, not interlaced.
func ZeroPNG(w, h int, depth, colorType byte, trns bool) []byte {
	return ZeroPNGInterlaced(w, h, depth, colorType, trns, false)
}

// adam7 is the Adam7 passes: x offset, y offset, x step, y step.
var adam7 = [7][4]int{{0, 0, 8, 8}, {4, 0, 8, 8}, {0, 4, 4, 8}, {2, 0, 4, 4}, {0, 2, 2, 4}, {1, 0, 2, 2}, {0, 1, 1, 2}}

// ZeroPNGInterlaced is a valid w×h PNG of the given bit depth and colour type whose
// samples are all zero (transparent black for the types with alpha, palette entry 0 for
// paletted ones). trns adds a tRNS chunk (for Gray and RGB: the image has a transparent
// colour, which makes Go's decoder return an image with alpha); interlaced makes it Adam7
// interlaced.
func ZeroPNGInterlaced(w, h int, depth, colorType byte, trns, interlaced bool) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], uint32(w))
	binary.BigEndian.PutUint32(ihdr[4:], uint32(h))
	ihdr[8], ihdr[9] = depth, colorType
	passes := [][4]int{{0, 0, 1, 1}}
	if interlaced {
		ihdr[12] = 1
		passes = adam7[:]
	}
	chunk(&b, "IHDR", ihdr)
	if colorType == Paletted {
		chunk(&b, "PLTE", []byte{0, 0, 0, 255, 255, 255})
	}
	if trns {
		switch colorType {
		case Gray:
			chunk(&b, "tRNS", []byte{0, 1})
		case RGB:
			chunk(&b, "tRNS", []byte{0, 1, 0, 1, 0, 1})
		case Paletted:
			chunk(&b, "tRNS", []byte{0})
		}
	}
	var idat bytes.Buffer
	z, _ := zlib.NewWriterLevel(&idat, zlib.BestSpeed)
	for _, p := range passes {
		pw, ph := (w-p[0]+p[2]-1)/p[2], (h-p[1]+p[3]-1)/p[3]
		if pw <= 0 || ph <= 0 {
			continue
		}
		row := make([]byte, 1+(pw*channels(colorType)*int(depth)+7)/8) // filter byte 0, then zero samples
		for range ph {
			_, _ = z.Write(row)
		}
	}
	_ = z.Close()
	chunk(&b, "IDAT", idat.Bytes())
	chunk(&b, "IEND", nil)
	return b.Bytes()
}

func chunk(b *bytes.Buffer, typ string, data []byte) {
	_ = binary.Write(b, binary.BigEndian, uint32(len(data)))
	crc := crc32.NewIEEE()
	crc.Write([]byte(typ))
	crc.Write(data)
	b.WriteString(typ)
	b.Write(data)
	_ = binary.Write(b, binary.BigEndian, crc.Sum32())
}
