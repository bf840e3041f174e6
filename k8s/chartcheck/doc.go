// Package chartcheck checks the deployment artefacts offline. It renders the Helm chart
// charts/vros with the pinned helm binary, decodes every rendered document strictly into the
// Kubernetes API types (an unknown or misspelt field fails) and asserts what the chart
// promises: hardened pods, probes, resources, Go runtime limits, network policies, referenced
// secrets, autoscaling and disruption budgets, compacted topics. It also decodes the kind
// config and the dev manifests of k8s/, and reads the services' Dockerfiles.
//
// The tests are the product; the non-test files are the helpers they share.
package chartcheck
