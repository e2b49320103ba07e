// Command kube-controller-manager is the upstream kube-controller-manager, built from the published k8s.io/kubernetes module.
package main

import (
	"os"
	_ "time/tzdata" // CronJob time zones

	"k8s.io/component-base/cli"
	_ "k8s.io/component-base/logs/json/register"           // JSON log format
	_ "k8s.io/component-base/metrics/prometheus/clientgo"  // client-go metrics
	_ "k8s.io/component-base/metrics/prometheus/version"   // version metric
	_ "k8s.io/component-base/metrics/prometheus/workqueue" // workqueue metrics
	"k8s.io/kubernetes/cmd/kube-controller-manager/app"
)

func main() {
	os.Exit(cli.Run(app.NewControllerManagerCommand()))
}
