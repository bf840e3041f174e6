// Package buildinfo carries the version stamped into a binary at link time.
package buildinfo

// Version is set with -ldflags "-X github.com/vros/vros/libs/buildinfo.Version=…".
var Version = "dev"
