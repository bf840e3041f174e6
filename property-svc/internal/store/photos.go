package store

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"strconv"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/property-svc/internal/photo"
)

// NewPhoto stores the renditions of a new photo of rec and adds it to the property.
func (s *Store) NewPhoto(ctx context.Context, rec Record, img *photo.Result, source string) (Record, int64, error) {
	id, err := s.photoIDs.Next(ctx)
	if err != nil {
		return Record{}, 0, err
	}
	out, err := s.putPhoto(ctx, rec, id, img, source)
	return out, id, err
}

// ReplacePhoto gives photo id of rec a new image. The photo keeps its id and position; its
// links change (renditions are immutable and cached for a year).
func (s *Store) ReplacePhoto(ctx context.Context, rec Record, id int64, img *photo.Result, source string) (Record, error) {
	old, ok := rec.Photos[strconv.FormatInt(id, 10)]
	if !ok {
		return Record{}, ErrPhotoNotFound
	}
	out, err := s.putPhoto(ctx, rec, id, img, source)
	if err != nil {
		return Record{}, err
	}
	s.deleteRenditions(ctx, old.Key)
	return out, nil
}

func (s *Store) putPhoto(ctx context.Context, rec Record, id int64, img *photo.Result, source string) (Record, error) {
	key := mediaKey()
	for _, r := range img.Ordered() {
		if err := s.media.UploadFromStreamWithID(ctx, renditionID(key, r.Name), r.Name+".jpg", bytes.NewReader(r.Data)); err != nil {
			s.deleteRenditions(ctx, key)
			return Record{}, fmt.Errorf("store rendition %s: %w", r.Name, err)
		}
	}
	ph := PhotoRec{PhotoID: id, Key: key, Width: img.Width, Height: img.Height, Source: source, CreatedAt: s.now()}
	out, err := s.write(ctx, rec.ID, PhotosUpdated, bson.D{{Key: "photos." + strconv.FormatInt(id, 10), Value: ph}})
	if err != nil {
		s.deleteRenditions(ctx, key)
	}
	return out, err
}

// DeletePhoto removes photo id from rec and deletes its renditions.
func (s *Store) DeletePhoto(ctx context.Context, rec Record, id int64) error {
	old, ok := rec.Photos[strconv.FormatInt(id, 10)]
	if !ok {
		return ErrPhotoNotFound
	}
	if _, err := s.update(ctx, rec.ID, PhotosUpdated,
		bson.D{{Key: "$unset", Value: bson.D{{Key: "photos." + strconv.FormatInt(id, 10), Value: ""}}}}, false); err != nil {
		return err
	}
	s.deleteRenditions(ctx, old.Key)
	return nil
}

// Rendition returns the bytes of one rendition of the photo with key.
func (s *Store) Rendition(ctx context.Context, key, name string) ([]byte, error) {
	var buf bytes.Buffer
	_, err := s.media.DownloadToStream(ctx, renditionID(key, name), &buf)
	if errors.Is(err, mongo.ErrFileNotFound) {
		return nil, ErrPhotoNotFound
	}
	return buf.Bytes(), err
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
