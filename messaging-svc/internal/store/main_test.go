package store

import (
	"testing"

	"go.mongodb.org/mongo-driver/v2/mongo"

	"github.com/vros/vros/testkit/testinfra"
)

// testDB is the package's database, on the embedded server (or VROS_MONGO_URI's): one for
// every test of the package, each test using its own account ids.
var testDB *mongo.Database

func TestMain(m *testing.M) { testinfra.RunWithDatabase(m, "messaging_store", &testDB, nil) }
