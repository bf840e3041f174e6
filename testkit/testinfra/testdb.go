package testinfra

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// TestDatabase gives a package's tests a fresh database: on the server VROS_MONGO_URI names,
// or on an embedded one started for the package (Start). Call stop when the tests are done;
// it drops the database and stops what it started.
func TestDatabase(prefix string) (db *mongo.Database, stop func(), err error) {
	ctx := context.Background()
	uri := os.Getenv("VROS_MONGO_URI")
	var infra *Infra
	if uri == "" {
		if infra, err = Start(ctx); err != nil {
			return nil, nil, err
		}
		uri = infra.MongoURI
	}
	client, err := mongo.Connect(options.Client().ApplyURI(uri))
	if err != nil {
		if infra != nil {
			infra.Close()
		}
		return nil, nil, err
	}
	db = client.Database(fmt.Sprintf("%s_%d", prefix, time.Now().UnixNano()))
	return db, func() {
		_ = db.Drop(ctx)
		_ = client.Disconnect(ctx)
		if infra != nil {
			infra.Close()
		}
	}, nil
}

// RunWithDatabase is a package's TestMain on a TestDatabase: it sets *db (when db is not nil),
// runs setup when given (a store built on it), runs the tests, drops the database and exits
// with their code.
func RunWithDatabase(m *testing.M, prefix string, db **mongo.Database, setup func(*mongo.Database) error) {
	d, stop, err := TestDatabase(prefix)
	if err != nil {
		fmt.Fprintln(os.Stderr, "test database:", err)
		os.Exit(1)
	}
	if db != nil {
		*db = d
	}
	if setup != nil {
		if err := setup(d); err != nil {
			fmt.Fprintln(os.Stderr, "test setup:", err)
			stop()
			os.Exit(1)
		}
	}
	code := m.Run()
	stop()
	os.Exit(code)
}
