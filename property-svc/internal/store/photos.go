package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"slices"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/libs/events/contract"
	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// AddPhoto stores the renditions of a new photo of p, adds it to the property, last in the
// order, and returns its photo id.
func (s *Store) AddPhoto(ctx context.Context, p property.Stored, img *photo.Result, source string) (int64, error) {
	id, err := s.photoIDs.Next(ctx)
	if err != nil {
		return 0, fmt.Errorf("allocate photo id: %w", err)
	}
	key, err := s.putRenditions(ctx, p.Account, img)
	if err != nil {
		return 0, err
	}
	ph := PhotoRec{PhotoID: id, Key: key, Width: img.Width, Height: img.Height, Source: source, CreatedAt: s.now()}
	if _, err := s.changePhotos(ctx, p, func(cur []PhotoRec) ([]PhotoRec, error) { return append(cur, ph), nil }); err != nil {
		s.deleteRenditions(ctx, key)
		return 0, err
	}
	return id, nil
}

// ReplacePhoto gives photo id of p a new image. The photo keeps its id and position; its
// links change (renditions are immutable and cached for a year).
func (s *Store) ReplacePhoto(ctx context.Context, p property.Stored, id int64, img *photo.Result, source string) error {
	if _, ok := p.Photos[id]; !ok {
		return property.ErrPhotoNotFound
	}
	key, err := s.putRenditions(ctx, p.Account, img)
	if err != nil {
		return err
	}
	var oldKey string
	_, err = s.changePhotos(ctx, p, func(cur []PhotoRec) ([]PhotoRec, error) {
		i := slices.IndexFunc(cur, func(ph PhotoRec) bool { return ph.PhotoID == id })
		if i < 0 {
			return nil, property.ErrPhotoNotFound // deleted meanwhile
		}
		oldKey = cur[i].Key
		next := slices.Clone(cur)
		next[i] = PhotoRec{PhotoID: id, Key: key, Width: img.Width, Height: img.Height, Source: source, CreatedAt: s.now()}
		return next, nil
	})
	if err != nil {
		s.deleteRenditions(ctx, key)
		return err
	}
	s.deleteRenditions(ctx, oldKey)
	return nil
}

// putRenditions stores every rendition of img under a new media key and returns the key.
func (s *Store) putRenditions(ctx context.Context, account string, img *photo.Result) (string, error) {
	key := mediaKey()
	for _, r := range img.Ordered() {
		// The account in the file's metadata lets an erasure find a file no property
		// names any more (a replaced photo whose old files could not be deleted).
		if err := s.media.UploadFromStreamWithID(ctx, renditionID(key, r.Name), r.Name+".jpg", bytes.NewReader(r.Data),
			options.GridFSUpload().SetMetadata(bson.D{{Key: "account", Value: account}})); err != nil {
			s.deleteRenditions(ctx, key)
			return "", fmt.Errorf("store rendition %s: %w", r.Name, err)
		}
	}
	return key, nil
}

// DeletePhoto removes photo id from p and deletes its renditions; the others keep their
// order.
func (s *Store) DeletePhoto(ctx context.Context, p property.Stored, id int64) error {
	if _, ok := p.Photos[id]; !ok {
		return property.ErrPhotoNotFound
	}
	var oldKey string
	_, err := s.changePhotos(ctx, p, func(cur []PhotoRec) ([]PhotoRec, error) {
		i := slices.IndexFunc(cur, func(ph PhotoRec) bool { return ph.PhotoID == id })
		if i < 0 {
			return nil, property.ErrPhotoNotFound // deleted meanwhile
		}
		oldKey = cur[i].Key
		return slices.Delete(slices.Clone(cur), i, i+1), nil
	})
	if err != nil {
		return err
	}
	s.deleteRenditions(ctx, oldKey)
	return nil
}

// OrderPhotos numbers the photos of p in the order order returns (docs/interface-a.md, A2
// order).
func (s *Store) OrderPhotos(ctx context.Context, p property.Stored, order func(cur []int64) ([]int64, error)) ([]int64, error) {
	rec, err := s.changePhotos(ctx, p, func(cur []PhotoRec) ([]PhotoRec, error) {
		ids := make([]int64, len(cur))
		byID := make(map[int64]PhotoRec, len(cur))
		for i, ph := range cur {
			ids[i], byID[ph.PhotoID] = ph.PhotoID, ph
		}
		want, err := order(ids)
		if err != nil {
			return nil, err
		}
		next := make([]PhotoRec, 0, len(want))
		for _, id := range want {
			ph, ok := byID[id]
			if !ok {
				return nil, fmt.Errorf("order photos: photo %d is not one of %v", id, ids)
			}
			delete(byID, id)
			next = append(next, ph)
		}
		if len(byID) > 0 {
			return nil, fmt.Errorf("order photos: %v leaves out photos of %v", want, ids)
		}
		return next, nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, len(rec.Photos))
	for _, ph := range orderedPhotos(rec.Photos) {
		out = append(out, ph.PhotoID)
	}
	return out, nil
}

// photoRetries bounds how often a photo write is computed again because the property
// changed between its read and its write.
const photoRetries = 50

// changePhotos rewrites the photos of p: change is given the property's photos as stored
// now, in their order, and returns them as they are to be, in their new order. They are
// numbered 1 to n in that order and written in place of the old ones, with the version
// bumped and the event recorded (updateWhere), only if the property is still at the version
// read: of two changes computed from one version only one is written, and the other is
// computed again on top of it, so no photo added, replaced or deleted meanwhile is lost (or
// brought back). Photos stored before positions (none has one) are numbered in their
// order then (by id). An error of change is returned as it is, nothing written.
func (s *Store) changePhotos(ctx context.Context, p property.Stored, change func(cur []PhotoRec) ([]PhotoRec, error)) (Record, error) {
	id := recordID(p.Account, p.ID)
	for range photoRetries {
		rec, err := s.get(ctx, id)
		if err != nil {
			return Record{}, err
		}
		if rec.Deleted {
			return Record{}, property.ErrNotFound
		}
		next, err := change(orderedPhotos(rec.Photos))
		if err != nil {
			return Record{}, err
		}
		photos := make(map[string]PhotoRec, len(next))
		for i, ph := range next {
			ph.Position = i + 1
			photos[strconv.FormatInt(ph.PhotoID, 10)] = ph
		}
		out, err := s.updateWhere(ctx, id, PhotosUpdated, bson.D{{Key: "version", Value: rec.Version}},
			bson.D{{Key: "$set", Value: bson.D{{Key: "photos", Value: photos}}}}, false)
		if errors.Is(err, property.ErrNotFound) {
			continue // changed meanwhile, or deleted: the next read tells
		}
		return out, err
	}
	return Record{}, fmt.Errorf("photos of %s: still changing under this change after %d attempts", id, photoRetries)
}

// orderedPhotos are stored photos in their order, contract.ComparePhotos's: the rule every
// reader of the events follows.
func orderedPhotos(m map[string]PhotoRec) []PhotoRec {
	out := make([]PhotoRec, 0, len(m))
	for _, ph := range m {
		out = append(out, ph)
	}
	slices.SortFunc(out, func(a, b PhotoRec) int { return contract.ComparePhotos(contract.Photo(a), contract.Photo(b)) })
	return out
}

// Rendition returns the bytes of one rendition of the photo with key.
func (s *Store) Rendition(ctx context.Context, key, name string) ([]byte, error) {
	var buf bytes.Buffer
	_, err := s.media.DownloadToStream(ctx, renditionID(key, name), &buf)
	if errors.Is(err, mongo.ErrFileNotFound) {
		return nil, property.ErrPhotoNotFound
	}
	if err != nil {
		return nil, fmt.Errorf("read rendition %s/%s: %w", key, name, err)
	}
	return buf.Bytes(), nil
}

// deleteRenditions is best effort: a leftover file is unreachable garbage, not a leak of
// data anyone still links to.
func (s *Store) deleteRenditions(ctx context.Context, key string) {
	for _, name := range photo.Names() {
		_ = s.media.Delete(ctx, renditionID(key, name))
	}
}

func renditionID(key, name string) string { return key + "/" + name }

// mediaKey is the unguessable public name of a photo's renditions.
func mediaKey() string {
	const alphabet = "abcdefghijklmnopqrstuvwxyz0123456789"
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = alphabet[int(b[i])%len(alphabet)]
	}
	return string(b)
}
