package openapi

import (
	"context"
	"testing"
)

// TestDocumentsLoad: every document parses, is valid OpenAPI 3.1, and its examples match
// their schemas.
func TestDocumentsLoad(t *testing.T) {
	for _, name := range Documents {
		doc, err := Load(context.Background(), name)
		if err != nil {
			t.Fatal(err)
		}
		if !doc.IsOpenAPI31OrLater() {
			t.Errorf("%s: openapi %s, want 3.1", name, doc.OpenAPI)
		}
	}
}
