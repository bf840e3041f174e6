// Package e2e deploys the chart on a throw-away kind cluster and runs the end-to-end checks
// through edge. Its tests carry the build tag e2e and need Docker and kubectl:
//
//	make e2e
//
// which builds the images and runs go test -tags e2e ./k8s/e2e/... . TestMain deploys one
// cluster for the whole run (kind, the images, the dev MongoDB and Kafka, the chart, helm
// test) and deletes it at the end. On it, in this order (scenarios_test.go):
//
//	TestDeployedChart                 API checks through edge's NodePort
//	TestBookingPodDeletedUnderLoad    bookings under load while the booking-svc pod is deleted
//	TestHelmUpgradeUnderLoad          helm upgrade to a new image tag under load, no failed request
//	TestTwoReplicasAgree              2 booking-svc and 2 catalog-svc replicas show each write within 1 s
//	TestKafkaPodDeletedDuringWrites   acknowledged writes reach the catalog after a Kafka restart
//
// Each scenario logs its figures in one line. Settings (environment):
//
//	VROS_E2E_IMAGE_REPO, VROS_E2E_IMAGE_TAG  images to load (default vros, dev)
//	VROS_E2E_HELM                            helm binary (default <repo>/bin/helm)
//	VROS_E2E_CLUSTER                         kind cluster name (default vros-e2e)
//	VROS_E2E_KIND_CONFIG                     kind config (default k8s/kind-config-airgap.yaml)
//	VROS_E2E_STORE_IMAGES                    dev store images to load (make e2e: from make airgap)
//	VROS_E2E_KEEP=1                          keep the cluster after the run, for debugging
//	VROS_E2E_BASE_URL, VROS_E2E_ADMIN_TOKEN  no cluster: run TestDeployedChart against a
//	                                         running edge (kind-deploy, make run); the
//	                                         cluster scenarios skip
package e2e
