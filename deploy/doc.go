// Package deploy holds gpuprice's deployment files — the Dockerfile, the
// docker-compose stack's configuration (compose/, prometheus/, alertmanager/,
// grafana/), the Kubernetes manifests (k8s/) and the test script — and the tests
// that check them without a container engine: every file parses, health checks and
// probes point at paths `gpuprice serve` answers, images are pinned, the Kustomize
// base and overlay render with a non-root, resource-bounded Deployment.
package deploy
