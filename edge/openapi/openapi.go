// Package openapi holds vros's public contract: one OpenAPI 3.1 document per audience,
// hand-written YAML and the one source of truth (docs/openapi.md). Edge serves them (and a
// reference page); the end-to-end tests validate every request and answer against them.
package openapi

import (
	"context"
	"embed"
	"fmt"

	"github.com/getkin/kin-openapi/openapi3"
)

// Documents are the documents' names, each a file <name>.yaml here.
var Documents = []string{"interface-a", "interface-b", "admin", "booking-engine"}

//go:embed *.yaml
var files embed.FS

// YAML is the document's source.
func YAML(name string) ([]byte, error) {
	return files.ReadFile(name + ".yaml")
}

// Load parses the document and checks it against OpenAPI 3.1 (its examples against their
// schemas too).
func Load(ctx context.Context, name string) (*openapi3.T, error) {
	src, err := YAML(name)
	if err != nil {
		return nil, err
	}
	l := openapi3.NewLoader()
	doc, err := l.LoadFromData(src)
	if err != nil {
		return nil, fmt.Errorf("openapi %s: %w", name, err)
	}
	if err := doc.Validate(ctx, openapi3.EnableExamplesValidation()); err != nil {
		return nil, fmt.Errorf("openapi %s: %w", name, err)
	}
	return doc, nil
}
