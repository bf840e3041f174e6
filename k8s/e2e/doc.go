// Package e2e deploys the chart on a throw-away kind cluster and runs the end-to-end API
// checks through edge. Its tests carry the build tag e2e and need Docker and kubectl:
//
//	make e2e
//
// which builds the images and runs go test -tags e2e ./k8s/e2e/... . Settings (environment):
//
//	VROS_E2E_IMAGE_REPO, VROS_E2E_IMAGE_TAG  images to load (default vros, dev)
//	VROS_E2E_HELM                            helm binary (default <repo>/bin/helm)
//	VROS_E2E_CLUSTER                         kind cluster name (default vros-e2e)
//	VROS_E2E_KEEP=1                          keep the cluster after the run, for debugging
//	VROS_E2E_BASE_URL, VROS_E2E_ADMIN_TOKEN  skip the cluster: run the API checks against a
//	                                         running edge (kind-deploy, make run)
package e2e
