package contract

import (
	"cmp"
	"slices"
)

// The order of a property's photos, the one rule every reader follows (catalog-svc's
// galleries, main photo and property detail; property-svc when it numbers them again): by
// Position, then, for photos without one (snapshots from before photos could be ordered,
// where no photo has one), by photo id after every photo with a position. The first is the
// property's main photo.

// ComparePhotos orders a before b (negative), after b (positive) or as b (0: one photo).
func ComparePhotos(a, b Photo) int {
	switch {
	case a.Position > 0 && b.Position <= 0:
		return -1
	case a.Position <= 0 && b.Position > 0:
		return 1
	}
	if c := cmp.Compare(a.Position, b.Position); c != 0 {
		return c
	}
	return cmp.Compare(a.PhotoID, b.PhotoID)
}

// OrderedPhotos returns the property's photos in their order (ComparePhotos); the first is
// the main photo. Empty, never nil, when there is none.
func (p Property) OrderedPhotos() []Photo {
	out := make([]Photo, 0, len(p.Photos))
	for _, ph := range p.Photos {
		out = append(out, ph)
	}
	slices.SortFunc(out, ComparePhotos)
	return out
}

// MainPhoto returns the property's main photo, the first of OrderedPhotos, found without
// copying and sorting them all; ok is false when the property has no photo.
func (p Property) MainPhoto() (main Photo, ok bool) {
	for _, ph := range p.Photos {
		if !ok || ComparePhotos(ph, main) < 0 {
			main, ok = ph, true
		}
	}
	return main, ok
}
