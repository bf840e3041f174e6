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
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// AddPhoto stores the renditions of a new photo of p, adds it to the property and returns
// its photo id.
func (s *Store) AddPhoto(ctx context.Context, p property.Stored, img *photo.Result, source string) (int64, error) {
	id, err := s.photoIDs.Next(ctx)
	if err != nil {
		return 0, fmt.Errorf("allocate photo id: %w", err)
	}
	return id, s.putPhoto(ctx, p, id, img, source)
}

// ReplacePhoto gives photo id of p a new image. The photo keeps its id and position; its
// links change (renditions are immutable and cached for a year).
func (s *Store) ReplacePhoto(ctx context.Context, p property.Stored, id int64, img *photo.Result, source string) error {
	oldKey, ok := p.Photos[id]
	if !ok {
		return property.ErrPhotoNotFound
	}
	if err := s.putPhoto(ctx, p, id, img, source); err != nil {
		return err
	}
	s.deleteRenditions(ctx, oldKey)
	return nil
}

func (s *Store) putPhoto(ctx context.Context, p property.Stored, id int64, img *photo.Result, source string) error {
	key := mediaKey()
	for _, r := range img.Ordered() {
		// The account in the file's metadata lets an erasure find a file no property
		// names any more (a replaced photo whose old files could not be deleted).
		if err := s.media.UploadFromStreamWithID(ctx, renditionID(key, r.Name), r.Name+".jpg", bytes.NewReader(r.Data),
			options.GridFSUpload().SetMetadata(bson.D{{Key: "account", Value: p.Account}})); err != nil {
			s.deleteRenditions(ctx, key)
			return fmt.Errorf("store rendition %s: %w", r.Name, err)
		}
	}
	ph := PhotoRec{PhotoID: id, Key: key, Width: img.Width, Height: img.Height, Source: source, CreatedAt: s.now()}
	_, err := s.write(ctx, recordID(p.Account, p.ID), PhotosUpdated, bson.D{{Key: "photos." + strconv.FormatInt(id, 10), Value: ph}})
	if err != nil {
		s.deleteRenditions(ctx, key)
	}
	return err
}

// DeletePhoto removes photo id from p and deletes its renditions.
func (s *Store) DeletePhoto(ctx context.Context, p property.Stored, id int64) error {
	oldKey, ok := p.Photos[id]
	if !ok {
		return property.ErrPhotoNotFound
	}
	if _, err := s.update(ctx, recordID(p.Account, p.ID), PhotosUpdated,
		bson.D{{Key: "$unset", Value: bson.D{{Key: "photos." + strconv.FormatInt(id, 10), Value: ""}}}}, false); err != nil {
		return err
	}
	s.deleteRenditions(ctx, oldKey)
	return nil
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
