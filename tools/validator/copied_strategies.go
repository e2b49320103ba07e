package main

// Create strategies of the kinds whose registry package (k8s.io/kubernetes/pkg/registry/...) cannot be
// linked here: service, configmap, secret, persistentvolumeclaim and job import the generic registry,
// which imports the etcd storage factory (it does not build for wasip1 and would more than double the
// module: 103 MB instead of ~45 MB, 2.8 s to initialise instead of a few hundred ms), and serviceaccount
// imports token signing. Each copies the PrepareForCreate and Validate of its strategy.go at the
// version go.mod pins (v1.37.2), lines that are no-ops on create with default feature gates left
// out and named below; the validation functions themselves are Kubernetes' own.

import (
	"context"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apiserver/pkg/storage/names"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	jobutil "k8s.io/kubernetes/pkg/api/job"
	"k8s.io/kubernetes/pkg/api/legacyscheme"
	pvcutil "k8s.io/kubernetes/pkg/api/persistentvolumeclaim"
	"k8s.io/kubernetes/pkg/api/pod"
	"k8s.io/kubernetes/pkg/apis/batch"
	batchvalidation "k8s.io/kubernetes/pkg/apis/batch/validation"
	api "k8s.io/kubernetes/pkg/apis/core"
	"k8s.io/kubernetes/pkg/apis/core/validation"
	"k8s.io/kubernetes/pkg/features"
)

// copiedStrategy is a rest.RESTCreateStrategy built from a strategy's PrepareForCreate and Validate.
type copiedStrategy struct {
	runtime.ObjectTyper
	names.NameGenerator
	prepare  func(obj runtime.Object)
	validate func(obj runtime.Object) field.ErrorList
}

func copied(prepare func(runtime.Object), validate func(runtime.Object) field.ErrorList) copiedStrategy {
	return copiedStrategy{legacyscheme.Scheme, names.SimpleNameGenerator, prepare, validate}
}

func (copiedStrategy) NamespaceScoped() bool { return true }
func (s copiedStrategy) PrepareForCreate(_ context.Context, obj runtime.Object) {
	if s.prepare != nil {
		s.prepare(obj)
	}
}
func (s copiedStrategy) Validate(_ context.Context, obj runtime.Object) field.ErrorList {
	return s.validate(obj)
}
func (copiedStrategy) WarningsOnCreate(context.Context, runtime.Object) []string { return nil }
func (copiedStrategy) Canonicalize(runtime.Object)                               {}

// pkg/registry/core/configmap: dropDisabledFields is empty.
var configMapStrategy = copied(nil, func(obj runtime.Object) field.ErrorList {
	return validation.ValidateConfigMap(obj.(*api.ConfigMap))
})

// pkg/registry/core/secret: dropDisabledFields is empty.
var secretStrategy = copied(nil, func(obj runtime.Object) field.ErrorList {
	return validation.ValidateSecret(obj.(*api.Secret))
})

// pkg/registry/core/serviceaccount: PrepareForCreate's cleanSecretReferences (keeps only the name of
// each secrets[] reference) is left out: it drops fields, it never makes an object invalid.
var serviceAccountStrategy = copied(nil, func(obj runtime.Object) field.ErrorList {
	return validation.ValidateServiceAccount(obj.(*api.ServiceAccount))
})

// pkg/registry/core/persistentvolumeclaim.
var persistentVolumeClaimStrategy = copied(func(obj runtime.Object) {
	pvc := obj.(*api.PersistentVolumeClaim)
	pvc.Status = api.PersistentVolumeClaimStatus{}
	pvcutil.DropDisabledFields(&pvc.Spec, nil)
	pvcutil.EnforceDataSourceBackwardsCompatibility(&pvc.Spec, nil)
	pvcutil.NormalizeDataSources(&pvc.Spec)
}, func(obj runtime.Object) field.ErrorList {
	pvc := obj.(*api.PersistentVolumeClaim)
	return validation.ValidatePersistentVolumeClaim(pvc, validation.ValidationOptionsForPersistentVolumeClaim(pvc, nil))
})

// pkg/registry/core/service, plus what its REST storage's BeginCreate does before validation
// (pkg/registry/core/service/storage/storage.go): normalizeClusterIPs (a clusterIP without clusterIPs
// initialises clusterIPs) and alloc.go's initNodePorts with stand-in node ports (ports of the same
// port number share one, so validation sees the duplicates the server sees). Not done: allocating
// cluster IPs and IP families (the allocator's own refusals, e.g. a cluster IP outside the service
// CIDR or a requested node port already taken, are not predicted).
var serviceStrategy = copied(func(obj runtime.Object) {
	service := obj.(*api.Service)
	service.Status = api.ServiceStatus{} // dropServiceDisabledFields is empty
	if len(service.Spec.ClusterIP) > 0 && len(service.Spec.ClusterIPs) == 0 {
		service.Spec.ClusterIPs = []string{service.Spec.ClusterIP}
	}
	standInNodePorts(service)
}, func(obj runtime.Object) field.ErrorList {
	return validation.ValidateServiceCreate(obj.(*api.Service))
})

// pkg/registry/batch/job.
var jobStrategy = copied(func(obj runtime.Object) {
	job := obj.(*batch.Job)
	if !*job.Spec.ManualSelector {
		generateJobSelector(job)
	}
	job.Status = batch.JobStatus{}
	job.Generation = 1
	if !utilfeature.DefaultFeatureGate.Enabled(features.JobManagedBy) {
		job.Spec.ManagedBy = nil
	}
	jobutil.DropDisabledFields(&job.Spec, nil)
	pod.DropDisabledTemplateFields(&job.Spec.Template, nil)
}, func(obj runtime.Object) field.ErrorList {
	job := obj.(*batch.Job)
	opts := batchvalidation.JobValidationOptions{
		PodValidationOptions:  pod.GetValidationOptionsFromPodTemplate(&job.Spec.Template, nil),
		RequirePrefixedLabels: true,
	}
	return batchvalidation.ValidateJobCreate(job, opts)
})

// generateJobSelector is pkg/registry/batch/job's generateSelector.
func generateJobSelector(obj *batch.Job) {
	if obj.Spec.Template.Labels == nil {
		obj.Spec.Template.Labels = make(map[string]string)
	}
	for _, label := range []string{batch.LegacyJobNameLabel, batch.JobNameLabel} {
		if _, found := obj.Spec.Template.Labels[label]; !found {
			obj.Spec.Template.Labels[label] = obj.ObjectMeta.Name
		}
	}
	for _, label := range []string{batch.LegacyControllerUidLabel, batch.ControllerUidLabel} {
		if _, found := obj.Spec.Template.Labels[label]; !found {
			obj.Spec.Template.Labels[label] = string(obj.ObjectMeta.UID)
		}
	}
	if obj.Spec.Selector == nil {
		obj.Spec.Selector = &metav1.LabelSelector{}
	}
	if obj.Spec.Selector.MatchLabels == nil {
		obj.Spec.Selector.MatchLabels = make(map[string]string)
	}
	if _, found := obj.Spec.Selector.MatchLabels[batch.ControllerUidLabel]; !found {
		obj.Spec.Selector.MatchLabels[batch.ControllerUidLabel] = string(obj.ObjectMeta.UID)
	}
}

// standInNodePorts is alloc.go's initNodePorts, with the next free port of the default range
// (30000-32767) standing in for the allocator's random one.
func standInNodePorts(service *api.Service) {
	allocate := service.Spec.Type == api.ServiceTypeNodePort ||
		(service.Spec.Type == api.ServiceTypeLoadBalancer && (service.Spec.AllocateLoadBalancerNodePorts == nil || *service.Spec.AllocateLoadBalancerNodePorts))
	taken := map[int32]bool{}
	for _, port := range service.Spec.Ports {
		taken[port.NodePort] = true
	}
	next := int32(30000)
	byPort := map[int32]int32{}
	for i := range service.Spec.Ports {
		port := &service.Spec.Ports[i]
		if port.NodePort == 0 && !allocate {
			continue
		}
		allocated := byPort[port.Port]
		switch {
		case allocated == 0 && port.NodePort != 0:
			byPort[port.Port] = port.NodePort
		case allocated == 0:
			requested := int32(0)
			for _, other := range service.Spec.Ports {
				if other.Port == port.Port && other.NodePort != 0 {
					requested = other.NodePort
					break
				}
			}
			if requested == 0 {
				for taken[next] {
					next++
				}
				requested = next
				taken[next] = true
			}
			port.NodePort = requested
			byPort[port.Port] = requested
		case port.NodePort == 0:
			port.NodePort = allocated
		}
	}
}
