package realinfra

import "github.com/vros/vros/testkit/servers"

// EnvControl names the environment variable holding the control address of running servers
// (ServeControl), through which a test in another process restarts the broker.
const EnvControl = servers.EnvControl

// ServeControl starts the control endpoint (testkit/servers) and returns its address, which
// Env then carries as VROS_INFRA_CONTROL.
func (in *Infra) ServeControl() (string, error) {
	if in.control != nil {
		return in.control.URL, nil
	}
	c, err := servers.ServeControl(in.StopKafka, in.StartKafka)
	if err != nil {
		return "", err
	}
	in.control = c
	return c.URL, nil
}
