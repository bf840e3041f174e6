package channels

import (
	"time"

	integration "github.com/vros/vros/integration-svc/service"
)

// channelConfig shortens integration-svc's channel waits for the tests (docs/channels.md,
// "Configuration"): the sender looks for work often, a refused request is tried again
// soon, and the feed is pulled every 2 s besides on Channex's webhook.
func channelConfig(c *integration.Config) {
	c.Channels.Poll = 100 * time.Millisecond
	c.Channels.ErrorRetry = 2 * time.Second
	c.Channels.PullPeriod = 2 * time.Second
}
