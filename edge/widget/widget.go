// Package widget holds the guest booking engine's browser files (docs/booking-engine.md),
// which edge serves under /widget/ as they are: no build step at run time, no dependency
// fetched from elsewhere.
package widget

import "embed"

// Assets is every file the widget serves, under assets/.
//
//go:embed assets
var Assets embed.FS
