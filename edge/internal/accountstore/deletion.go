package accountstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"

	"github.com/vros/vros/edge/internal/account"
)

// live selects account id unless its deletion has begun: every write but the deletion's
// goes through it.
func live(id string) bson.D {
	return bson.D{{Key: "_id", Value: id},
		{Key: "status", Value: bson.D{{Key: "$nin", Value: bson.A{string(account.Deleting), string(account.Deleted)}}}}}
}

// whyNot is the error of a write that live(id) matched nothing for: the account does not
// exist (or is deleted), or its deletion has begun.
func (s *Store) whyNot(ctx context.Context, id string) error {
	d, err := s.get(ctx, id)
	switch {
	case err != nil:
		return err
	case d.Status == string(account.Deleting):
		return account.ErrDeleting
	default:
		return account.ErrNotFound
	}
}

// MarkDeleting makes the account Deleting, stamped at, unless it already is (then it keeps
// its first stamp). The write stamps changed_at, so that every replica's poll drops the
// account's cached credentials.
func (s *Store) MarkDeleting(ctx context.Context, id string, at time.Time) (before, after account.Account, err error) {
	unlock := s.lock(id)
	defer unlock()
	var d accountDoc
	err = s.accounts.FindOneAndUpdate(ctx, live(id), bson.D{
		{Key: "$set", Value: bson.D{{Key: "status", Value: string(account.Deleting)}, {Key: "deleting_at", Value: at},
			{Key: "updated_at", Value: at}, {Key: "changed_at", Value: at}}},
		{Key: "$inc", Value: bson.D{{Key: "version", Value: 1}}},
	}, options.FindOneAndUpdate().SetReturnDocument(options.Before)).Decode(&d)
	if errors.Is(err, mongo.ErrNoDocuments) {
		// Already Deleting (a retry), or not there at all.
		if d, err = s.get(ctx, id); err != nil {
			return account.Account{}, account.Account{}, err
		}
		if d.Status != string(account.Deleting) {
			return account.Account{}, account.Account{}, account.ErrNotFound
		}
		return fromDoc(d), fromDoc(d), nil
	}
	if err != nil {
		return account.Account{}, account.Account{}, err
	}
	before = fromDoc(d)
	d.Status, d.DeletingAt, d.UpdatedAt, d.ChangedAt = string(account.Deleting), at, at, at
	d.Version++
	return before, fromDoc(d), nil
}

// FinishDeletion deletes the credentials of a Deleting account (every one stored for it,
// listed or left over from a rotation), blanks its name in its audit records, and then, as
// the last step, replaces the account by its minimal record: id, status deleted, deleted_at
// (and the poll stamps). Until that last write the account stays Deleting, so a retry
// repeats the steps, each harmless twice.
func (s *Store) FinishDeletion(ctx context.Context, id string, at time.Time) (account.Account, error) {
	unlock := s.lock(id)
	defer unlock()
	d, err := s.get(ctx, id)
	if err != nil {
		return account.Account{}, err
	}
	switch d.Status {
	case string(account.Deleted):
		return fromDoc(d), nil
	case string(account.Deleting):
	default:
		return account.Account{}, fmt.Errorf("account %s is %s, not being deleted", id, d.Status)
	}
	if _, err := s.credentials.DeleteMany(ctx, bson.D{{Key: "account_id", Value: id}}); err != nil {
		return account.Account{}, fmt.Errorf("delete credentials: %w", err)
	}
	if err := s.blankNames(ctx, id); err != nil {
		return account.Account{}, err
	}
	rest := bson.D{{Key: "_id", Value: id}, {Key: "name", Value: ""}, {Key: "status", Value: string(account.Deleted)},
		{Key: "deleted_at", Value: at}, {Key: "changed_at", Value: at}, {Key: "version", Value: d.Version + 1}}
	res, err := s.accounts.ReplaceOne(ctx, bson.D{{Key: "_id", Value: id}, {Key: "status", Value: string(account.Deleting)}}, rest)
	if err != nil {
		return account.Account{}, fmt.Errorf("leave the deleted account's record: %w", err)
	}
	if res.MatchedCount == 0 { // another replica's run finished it first
		if d, err = s.get(ctx, id); err != nil {
			return account.Account{}, err
		}
		return fromDoc(d), nil
	}
	return account.Account{ID: id, Status: account.Deleted, DeletedAt: at, Identifiers: map[account.Kind]string{}}, nil
}

// blankNames blanks the account's name wherever its audit records hold it (the creation's
// record). The records themselves are kept: who did what to the account, and when.
func (s *Store) blankNames(ctx context.Context, id string) error {
	cur, err := s.audit.Find(ctx, bson.D{{Key: "account_id", Value: id}})
	if err != nil {
		return fmt.Errorf("read audit records: %w", err)
	}
	var docs []auditDoc
	if err := cur.All(ctx, &docs); err != nil {
		return fmt.Errorf("read audit records: %w", err)
	}
	for _, r := range docs {
		named := false
		for i, c := range r.Changes {
			if c.Field == "name" && (c.Old != nil && c.Old != "" || c.New != nil && c.New != "") {
				r.Changes[i].Old, r.Changes[i].New = blank(c.Old), blank(c.New)
				named = true
			}
		}
		if !named {
			continue
		}
		if _, err := s.audit.UpdateOne(ctx, bson.D{{Key: "_id", Value: r.ID}}, bson.D{{Key: "$set", Value: bson.D{{Key: "changes", Value: r.Changes}}}}); err != nil {
			return fmt.Errorf("blank the name in audit record %s: %w", r.ID, err)
		}
	}
	return nil
}

// blank is "" for a recorded name, nil where none was recorded.
func blank(v any) any {
	if v == nil {
		return nil
	}
	return ""
}

// Deleting lists the accounts Deleting since before, oldest first.
func (s *Store) Deleting(ctx context.Context, before time.Time) ([]string, error) {
	cur, err := s.accounts.Find(ctx, bson.D{{Key: "status", Value: string(account.Deleting)}, {Key: "deleting_at", Value: bson.D{{Key: "$lt", Value: before}}}},
		options.Find().SetSort(bson.D{{Key: "deleting_at", Value: 1}}).SetProjection(bson.D{{Key: "_id", Value: 1}}))
	if err != nil {
		return nil, err
	}
	var docs []struct {
		ID string `bson:"_id"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, err
	}
	out := make([]string, len(docs))
	for i, d := range docs {
		out[i] = d.ID
	}
	return out, nil
}
