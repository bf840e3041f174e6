package store

import (
	"context"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/property-svc/internal/photo"
	"github.com/vros/vros/property-svc/internal/property"
)

// Usage counts the account's figures over [from, to) from its documents (property.Accounts).
func (s *Store) Usage(ctx context.Context, account string, from, to time.Time) (property.Usage, error) {
	var u property.Usage
	var err error
	if u.Current, err = s.liveCount(ctx, account); err != nil {
		return u, err
	}
	within := bson.D{{Key: "$gte", Value: from}, {Key: "$lt", Value: to}}
	mine := bson.E{Key: "account_id", Value: account}
	if u.Created, err = s.props.CountDocuments(ctx, bson.D{mine, {Key: "created_at", Value: within}}); err != nil {
		return u, fmt.Errorf("count the properties %s created: %w", account, err)
	}
	u.Deleted, err = s.props.CountDocuments(ctx, bson.D{mine, {Key: "deleted", Value: true}, {Key: "$or", Value: bson.A{
		bson.D{{Key: "deleted_at", Value: within}},
		bson.D{{Key: "deleted_at", Value: bson.D{{Key: "$exists", Value: false}}}, {Key: "updated_at", Value: within}},
	}}})
	if err != nil {
		return u, fmt.Errorf("count the properties %s deleted: %w", account, err)
	}
	u.Photos, u.PhotoBytes, err = s.photoUsage(ctx, account)
	return u, err
}

// photoUsage counts the photos of the account's live properties, and the bytes of every
// media file the account holds: the renditions of every photo its properties name, and any
// file stored for it that no property names any more (metadata.account).
func (s *Store) photoUsage(ctx context.Context, account string) (photos, bytes int64, err error) {
	recs, err := s.accountProperties(ctx, account, options.Find().SetProjection(bson.D{{Key: "photos", Value: 1}, {Key: "deleted", Value: 1}}))
	if err != nil {
		return 0, 0, err
	}
	ids := bson.A{}
	for _, r := range recs {
		if !r.Deleted {
			photos += int64(len(r.Photos))
		}
		for _, ph := range r.Photos {
			for _, name := range photo.Names() {
				ids = append(ids, renditionID(ph.Key, name))
			}
		}
	}
	cur, err := s.media.GetFilesCollection().Find(ctx,
		bson.D{{Key: "$or", Value: bson.A{
			bson.D{{Key: "_id", Value: bson.D{{Key: "$in", Value: ids}}}},
			bson.D{{Key: "metadata.account", Value: account}},
		}}},
		options.Find().SetProjection(bson.D{{Key: "length", Value: 1}}))
	if err != nil {
		return 0, 0, fmt.Errorf("read the media files of %s: %w", account, err)
	}
	var files []struct {
		Length int64 `bson:"length"`
	}
	if err := cur.All(ctx, &files); err != nil {
		return 0, 0, fmt.Errorf("read the media files of %s: %w", account, err)
	}
	for _, f := range files {
		bytes += f.Length
	}
	return photos, bytes, nil
}
