// Command memcached-operator is the benchmark's controller-runtime peer: the Operator SDK tutorial's
// Memcached operator (get, create if missing, update replicas if they differ, status through the status
// subresource, one worker), doing the same job as operators/memcached with the same CRD
// (cache.example.com/v1beta1 Memcached, the storage version), the same children (a Deployment and a ClusterIP Service named
// after the CR), the same kstatus conditions (Ready, Reconciling, Stalled with observedGeneration) and the
// same status.nodes: the names of the CR's Pods, listed from the cache as the tutorial's earlier versions
// did, with Pod events mapped to their Memcached (operators/memcached declares its Pods as related, and
// a Pod event reconciles the CR that selects it).
//
// It is built by build.sh (pinned go.mod/go.sum, Go module proxy, cached outside the repository) and
// started by bench/peers.ts with:
//
//	memcached-operator --kubeconfig PATH --metrics-bind-address 127.0.0.1:PORT [--namespace NS]
//
// Defaults are the scaffold's: controller-runtime's client (no client-side rate limit), its default
// workqueue, MaxConcurrentReconciles 1, zap production logging at info level to stderr.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"reflect"
	"sort"

	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/intstr"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/utils/ptr"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/controller"
	"sigs.k8s.io/controller-runtime/pkg/controller/controllerutil"
	"sigs.k8s.io/controller-runtime/pkg/handler"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"
	"sigs.k8s.io/controller-runtime/pkg/reconcile"
	"sigs.k8s.io/controller-runtime/pkg/scheme"
)

// ---- API types (what kubebuilder would generate for the tutorial's Memcached) ----

var groupVersion = schema.GroupVersion{Group: "cache.example.com", Version: "v1beta1"}

// MemcachedSpec is the tutorial's spec: how many memcached pods to run.
type MemcachedSpec struct {
	Size int32 `json:"replicas"`
}

// MemcachedStatus mirrors the status our runtime writes (conditions keyed by type, observedGeneration).
type MemcachedStatus struct {
	ObservedGeneration int64              `json:"observedGeneration,omitempty"`
	Conditions         []metav1.Condition `json:"conditions,omitempty"`
	// Nodes are the names of the memcached Pods, sorted (never null: the CRD requires a list).
	Nodes []string `json:"nodes"`
}

// Memcached is the custom resource.
type Memcached struct {
	metav1.TypeMeta   `json:",inline"`
	metav1.ObjectMeta `json:"metadata,omitempty"`
	Spec              MemcachedSpec   `json:"spec,omitempty"`
	Status            MemcachedStatus `json:"status,omitempty"`
}

// MemcachedList is a list of Memcached.
type MemcachedList struct {
	metav1.TypeMeta `json:",inline"`
	metav1.ListMeta `json:"metadata,omitempty"`
	Items           []Memcached `json:"items"`
}

func (in *Memcached) DeepCopyInto(out *Memcached) {
	*out = *in
	out.TypeMeta = in.TypeMeta
	in.ObjectMeta.DeepCopyInto(&out.ObjectMeta)
	out.Spec = in.Spec
	out.Status.ObservedGeneration = in.Status.ObservedGeneration
	if in.Status.Nodes != nil {
		out.Status.Nodes = append([]string{}, in.Status.Nodes...)
	}
	if in.Status.Conditions != nil {
		out.Status.Conditions = make([]metav1.Condition, len(in.Status.Conditions))
		for i := range in.Status.Conditions {
			in.Status.Conditions[i].DeepCopyInto(&out.Status.Conditions[i])
		}
	}
}

func (in *Memcached) DeepCopy() *Memcached {
	if in == nil {
		return nil
	}
	out := new(Memcached)
	in.DeepCopyInto(out)
	return out
}

func (in *Memcached) DeepCopyObject() runtime.Object { return in.DeepCopy() }

func (in *MemcachedList) DeepCopyObject() runtime.Object {
	if in == nil {
		return nil
	}
	out := new(MemcachedList)
	*out = *in
	in.ListMeta.DeepCopyInto(&out.ListMeta)
	if in.Items != nil {
		out.Items = make([]Memcached, len(in.Items))
		for i := range in.Items {
			in.Items[i].DeepCopyInto(&out.Items[i])
		}
	}
	return out
}

// ---- Reconciler ----

const (
	fieldOwner   = "memcached-operator"
	managedBy    = "app.kubernetes.io/managed-by"
	instance     = "app.kubernetes.io/instance"
	appName      = "app.kubernetes.io/name"
	ownerUID     = "operator.cdk8s.io/owner-uid"
	image        = "memcached:1.6.17-alpine"
	memcachedUID = int64(11211)
	port         = int32(11211)
)

// MemcachedReconciler reconciles a Memcached: Deployment + Service, then status.
type MemcachedReconciler struct {
	client.Client
}

func (r *MemcachedReconciler) Reconcile(ctx context.Context, req ctrl.Request) (ctrl.Result, error) {
	log := ctrl.LoggerFrom(ctx)
	mc := &Memcached{}
	if err := r.Get(ctx, req.NamespacedName, mc); err != nil {
		return ctrl.Result{}, client.IgnoreNotFound(err)
	}
	if !mc.DeletionTimestamp.IsZero() {
		return ctrl.Result{}, nil // children are garbage-collected through their ownerReferences
	}

	// Deployment: create if missing, update replicas if they differ.
	dep := &appsv1.Deployment{}
	err := r.Get(ctx, req.NamespacedName, dep)
	switch {
	case apierrors.IsNotFound(err):
		dep = deploymentFor(mc)
		if err := controllerutil.SetControllerReference(mc, dep, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		log.Info("creating Deployment", "deployment", dep.Name)
		if err := r.Create(ctx, dep, client.FieldOwner(fieldOwner)); err != nil {
			return r.stalled(ctx, mc, "ApplyFailed", err)
		}
	case err != nil:
		return ctrl.Result{}, err
	case dep.Spec.Replicas == nil || *dep.Spec.Replicas != mc.Spec.Size:
		dep.Spec.Replicas = ptr.To(mc.Spec.Size)
		log.Info("updating Deployment replicas", "deployment", dep.Name, "replicas", mc.Spec.Size)
		if err := r.Update(ctx, dep, client.FieldOwner(fieldOwner)); err != nil {
			return r.stalled(ctx, mc, "ApplyFailed", err)
		}
	}

	// Service: create if missing.
	svc := &corev1.Service{}
	err = r.Get(ctx, req.NamespacedName, svc)
	switch {
	case apierrors.IsNotFound(err):
		svc = serviceFor(mc)
		if err := controllerutil.SetControllerReference(mc, svc, r.Scheme()); err != nil {
			return ctrl.Result{}, err
		}
		log.Info("creating Service", "service", svc.Name)
		if err := r.Create(ctx, svc, client.FieldOwner(fieldOwner)); err != nil {
			return r.stalled(ctx, mc, "ApplyFailed", err)
		}
	case err != nil:
		return ctrl.Result{}, err
	}

	// status.nodes: the CR's Pods (from the cache), those on their way out left out.
	pods := &corev1.PodList{}
	if err := r.List(ctx, pods, client.InNamespace(mc.Namespace), client.MatchingLabels(selectorLabels(mc))); err != nil {
		return ctrl.Result{}, err
	}
	nodes := []string{}
	for _, pod := range pods.Items {
		if pod.DeletionTimestamp.IsZero() {
			nodes = append(nodes, pod.Name)
		}
	}
	sort.Strings(nodes)
	mc.Status.Nodes = nodes

	// Ready follows the Deployment: Available at its current generation (as our runtime reads it).
	ready, message := deploymentReady(dep)
	if ready {
		r.setConditions(mc, "True", "Ready", "2 children ready")
	} else {
		r.setConditions(mc, "False", "ChildrenNotReady", message)
	}
	return ctrl.Result{}, r.writeStatus(ctx, mc)
}

// setConditions sets Ready/Reconciling/Stalled like lib/runtime/conditions.ts kstatusConditions.
func (r *MemcachedReconciler) setConditions(mc *Memcached, readyStatus, reason, message string) {
	reconciling, reconcilingMessage := metav1.ConditionFalse, ""
	if readyStatus != "True" {
		reconciling, reconcilingMessage = metav1.ConditionTrue, message
	}
	g := mc.Generation
	mc.Status.ObservedGeneration = g
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionStatus(readyStatus), Reason: reason, Message: message, ObservedGeneration: g})
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Reconciling", Status: reconciling, Reason: reason, Message: reconcilingMessage, ObservedGeneration: g})
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Stalled", Status: metav1.ConditionFalse, Reason: reason, Message: "", ObservedGeneration: g})
}

// writeStatus updates the status subresource only when it changed (compared with the cached object).
func (r *MemcachedReconciler) writeStatus(ctx context.Context, mc *Memcached) error {
	cached := &Memcached{}
	if err := r.Get(ctx, client.ObjectKeyFromObject(mc), cached); err == nil && reflect.DeepEqual(cached.Status, mc.Status) {
		return nil
	}
	return r.Status().Update(ctx, mc)
}

func (r *MemcachedReconciler) stalled(ctx context.Context, mc *Memcached, reason string, cause error) (ctrl.Result, error) {
	g := mc.Generation
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Ready", Status: metav1.ConditionFalse, Reason: reason, Message: cause.Error(), ObservedGeneration: g})
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Reconciling", Status: metav1.ConditionFalse, Reason: reason, ObservedGeneration: g})
	meta.SetStatusCondition(&mc.Status.Conditions, metav1.Condition{Type: "Stalled", Status: metav1.ConditionTrue, Reason: reason, Message: cause.Error(), ObservedGeneration: g})
	_ = r.Status().Update(ctx, mc)
	return ctrl.Result{}, cause
}

// podToMemcached maps a memcached Pod to the Memcached that selects it (its instance label).
func podToMemcached(_ context.Context, obj client.Object) []reconcile.Request {
	labels := obj.GetLabels()
	if labels[appName] != "memcached" || labels[instance] == "" {
		return nil
	}
	return []reconcile.Request{{NamespacedName: client.ObjectKey{Namespace: obj.GetNamespace(), Name: labels[instance]}}}
}

func deploymentReady(dep *appsv1.Deployment) (bool, string) {
	if dep.Status.ObservedGeneration < dep.Generation {
		return false, fmt.Sprintf("Deployment %s/%s: rollout not observed yet", dep.Namespace, dep.Name)
	}
	for _, c := range dep.Status.Conditions {
		if c.Type == appsv1.DeploymentAvailable && c.Status == corev1.ConditionTrue {
			return true, ""
		}
	}
	return false, fmt.Sprintf("Deployment %s/%s: not available", dep.Namespace, dep.Name)
}

func childLabels(mc *Memcached) map[string]string {
	return map[string]string{managedBy: fieldOwner, instance: mc.Name, ownerUID: string(mc.UID)}
}

func selectorLabels(mc *Memcached) map[string]string {
	return map[string]string{appName: "memcached", instance: mc.Name}
}

// deploymentFor builds the same Deployment that operators/memcached renders.
func deploymentFor(mc *Memcached) *appsv1.Deployment {
	tcp := corev1.ProbeHandler{TCPSocket: &corev1.TCPSocketAction{Port: intstr.FromInt32(port)}}
	return &appsv1.Deployment{
		ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: childLabels(mc)},
		Spec: appsv1.DeploymentSpec{
			Replicas: ptr.To(mc.Spec.Size),
			Selector: &metav1.LabelSelector{MatchLabels: selectorLabels(mc)},
			Template: corev1.PodTemplateSpec{
				ObjectMeta: metav1.ObjectMeta{Labels: selectorLabels(mc)},
				Spec: corev1.PodSpec{
					AutomountServiceAccountToken: ptr.To(false),
					SecurityContext: &corev1.PodSecurityContext{
						RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(memcachedUID), RunAsGroup: ptr.To(memcachedUID),
						FSGroup: ptr.To(memcachedUID), FSGroupChangePolicy: ptr.To(corev1.FSGroupChangeAlways),
					},
					Containers: []corev1.Container{{
						Name:            "memcached",
						Image:           image,
						ImagePullPolicy: corev1.PullIfNotPresent,
						Args:            []string{"-m=64", "-o", "modern", "-v"},
						Ports:           []corev1.ContainerPort{{Name: "memcached", ContainerPort: port}},
						ReadinessProbe:  &corev1.Probe{ProbeHandler: tcp, FailureThreshold: 3},
						LivenessProbe:   &corev1.Probe{ProbeHandler: tcp, FailureThreshold: 3},
						Resources: corev1.ResourceRequirements{
							Requests: corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("50m"), corev1.ResourceMemory: resource.MustParse("96Mi")},
							Limits:   corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("500m"), corev1.ResourceMemory: resource.MustParse("128Mi")},
						},
						SecurityContext: &corev1.SecurityContext{
							AllowPrivilegeEscalation: ptr.To(false), Privileged: ptr.To(false), ReadOnlyRootFilesystem: ptr.To(true),
							RunAsNonRoot: ptr.To(true), RunAsUser: ptr.To(memcachedUID), RunAsGroup: ptr.To(memcachedUID),
							Capabilities:   &corev1.Capabilities{Drop: []corev1.Capability{"ALL"}},
							SeccompProfile: &corev1.SeccompProfile{Type: corev1.SeccompProfileTypeRuntimeDefault},
						},
					}},
				},
			},
		},
	}
}

// serviceFor builds the same ClusterIP Service that operators/memcached renders.
func serviceFor(mc *Memcached) *corev1.Service {
	return &corev1.Service{
		ObjectMeta: metav1.ObjectMeta{Name: mc.Name, Namespace: mc.Namespace, Labels: childLabels(mc)},
		Spec: corev1.ServiceSpec{
			Type:     corev1.ServiceTypeClusterIP,
			Selector: selectorLabels(mc),
			Ports:    []corev1.ServicePort{{Name: "memcached", Port: port, TargetPort: intstr.FromInt32(port)}},
		},
	}
}

func main() {
	var metricsAddr, namespace string
	flag.StringVar(&metricsAddr, "metrics-bind-address", "0", "address of the Prometheus metrics endpoint (0 = off)")
	flag.StringVar(&namespace, "namespace", "", "watch only this namespace (default: all)")
	opts := zap.Options{}
	opts.BindFlags(flag.CommandLine)
	flag.Parse()
	ctrl.SetLogger(zap.New(zap.UseFlagOptions(&opts)))
	setupLog := ctrl.Log.WithName("setup")

	sch := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(sch); err != nil {
		panic(err)
	}
	builder := &scheme.Builder{GroupVersion: groupVersion}
	builder.Register(&Memcached{}, &MemcachedList{})
	if err := builder.AddToScheme(sch); err != nil {
		panic(err)
	}

	cacheOpts := cache.Options{}
	if namespace != "" {
		cacheOpts.DefaultNamespaces = map[string]cache.Config{namespace: {}}
	}
	mgr, err := ctrl.NewManager(ctrl.GetConfigOrDie(), ctrl.Options{
		Scheme:                 sch,
		Metrics:                metricsserver.Options{BindAddress: metricsAddr},
		HealthProbeBindAddress: "0",
		Cache:                  cacheOpts,
	})
	if err != nil {
		setupLog.Error(err, "unable to create manager")
		os.Exit(1)
	}
	err = ctrl.NewControllerManagedBy(mgr).
		For(&Memcached{}).
		Owns(&appsv1.Deployment{}).
		Owns(&corev1.Service{}).
		Watches(&corev1.Pod{}, handler.EnqueueRequestsFromMapFunc(podToMemcached)).
		WithOptions(controller.Options{MaxConcurrentReconciles: 1}).
		Complete(&MemcachedReconciler{Client: mgr.GetClient()})
	if err != nil {
		setupLog.Error(err, "unable to create controller")
		os.Exit(1)
	}
	setupLog.Info("starting manager")
	if err := mgr.Start(ctrl.SetupSignalHandler()); err != nil {
		setupLog.Error(err, "manager exited")
		os.Exit(1)
	}
}
