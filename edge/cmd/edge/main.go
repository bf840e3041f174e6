// Command edge is the public entry of vros.
package main

import (
	_ "time/tzdata" // property time zones must not depend on the image's zone files

	"github.com/vros/vros/edge/service"
	"github.com/vros/vros/libs/daemon"
)

func main() { daemon.Main("edge", service.Run) }
