//go:build e2e

package e2e

import "testing"

// The scenarios of issue #9, "What the kind e2e suite proves", on the cluster TestMain
// deployed. They run in this order, after TestDeployedChart: go test runs a package's tests
// in the order of its files' names, then of their source, and these are the only tests
// besides TestDeployedChart (api_test.go). The order matters because the cluster is shared:
// the upgrade leaves every image on <tag>-upgrade, and from the third scenario on booking-svc
// and catalog-svc run 2 replicas. Each scenario creates its own account and properties, and
// logs its figures in one line (they go into docs/kubernetes.md).

func TestBookingPodDeletedUnderLoad(t *testing.T) { bookingPodDeletedUnderLoad(t, needCluster(t)) }

func TestHelmUpgradeUnderLoad(t *testing.T) { helmUpgradeUnderLoad(t, needCluster(t)) }

func TestTwoReplicasAgree(t *testing.T) { twoReplicasAgree(t, needCluster(t)) }

func TestKafkaPodDeletedDuringWrites(t *testing.T) { kafkaPodDeletedDuringWrites(t, needCluster(t)) }
