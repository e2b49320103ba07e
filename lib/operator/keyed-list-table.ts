/**
 * Generated from kube-apiserver 1.35's OpenAPI v3 by test/support/openapi-list-maps.ts
 * (`deriveKeyedListSchema`); test/integration/server-limits-differential.test.ts fails when the live
 * server's table differs, and prints the new one. Do not edit by hand.
 */
import type { KeyedListSchema } from './keyed-lists.js';

export const BUILT_IN_KEYED_LISTS: KeyedListSchema = {
  "kinds": {
    "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy",
    "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding",
    "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration",
    "apiextensions.k8s.io/v1/CustomResourceDefinition": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition",
    "apiregistration.k8s.io/v1/APIService": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService",
    "apps/v1/ControllerRevision": "io.k8s.api.apps.v1.ControllerRevision",
    "apps/v1/DaemonSet": "io.k8s.api.apps.v1.DaemonSet",
    "apps/v1/Deployment": "io.k8s.api.apps.v1.Deployment",
    "apps/v1/ReplicaSet": "io.k8s.api.apps.v1.ReplicaSet",
    "apps/v1/StatefulSet": "io.k8s.api.apps.v1.StatefulSet",
    "autoscaling/v1/HorizontalPodAutoscaler": "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler",
    "autoscaling/v2/HorizontalPodAutoscaler": "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler",
    "batch/v1/CronJob": "io.k8s.api.batch.v1.CronJob",
    "batch/v1/Job": "io.k8s.api.batch.v1.Job",
    "certificates.k8s.io/v1/CertificateSigningRequest": "io.k8s.api.certificates.v1.CertificateSigningRequest",
    "coordination.k8s.io/v1/Lease": "io.k8s.api.coordination.v1.Lease",
    "discovery.k8s.io/v1/EndpointSlice": "io.k8s.api.discovery.v1.EndpointSlice",
    "events.k8s.io/v1/Event": "io.k8s.api.events.v1.Event",
    "networking.k8s.io/v1/Ingress": "io.k8s.api.networking.v1.Ingress",
    "networking.k8s.io/v1/IngressClass": "io.k8s.api.networking.v1.IngressClass",
    "networking.k8s.io/v1/NetworkPolicy": "io.k8s.api.networking.v1.NetworkPolicy",
    "node.k8s.io/v1/RuntimeClass": "io.k8s.api.node.v1.RuntimeClass",
    "policy/v1/PodDisruptionBudget": "io.k8s.api.policy.v1.PodDisruptionBudget",
    "rbac.authorization.k8s.io/v1/ClusterRole": "io.k8s.api.rbac.v1.ClusterRole",
    "rbac.authorization.k8s.io/v1/ClusterRoleBinding": "io.k8s.api.rbac.v1.ClusterRoleBinding",
    "rbac.authorization.k8s.io/v1/Role": "io.k8s.api.rbac.v1.Role",
    "rbac.authorization.k8s.io/v1/RoleBinding": "io.k8s.api.rbac.v1.RoleBinding",
    "scheduling.k8s.io/v1/PriorityClass": "io.k8s.api.scheduling.v1.PriorityClass",
    "storage.k8s.io/v1/CSIDriver": "io.k8s.api.storage.v1.CSIDriver",
    "storage.k8s.io/v1/CSINode": "io.k8s.api.storage.v1.CSINode",
    "storage.k8s.io/v1/CSIStorageCapacity": "io.k8s.api.storage.v1.CSIStorageCapacity",
    "storage.k8s.io/v1/StorageClass": "io.k8s.api.storage.v1.StorageClass",
    "storage.k8s.io/v1/VolumeAttachment": "io.k8s.api.storage.v1.VolumeAttachment",
    "v1/ConfigMap": "io.k8s.api.core.v1.ConfigMap",
    "v1/Endpoints": "io.k8s.api.core.v1.Endpoints",
    "v1/Event": "io.k8s.api.core.v1.Event",
    "v1/LimitRange": "io.k8s.api.core.v1.LimitRange",
    "v1/Namespace": "io.k8s.api.core.v1.Namespace",
    "v1/Node": "io.k8s.api.core.v1.Node",
    "v1/PersistentVolume": "io.k8s.api.core.v1.PersistentVolume",
    "v1/PersistentVolumeClaim": "io.k8s.api.core.v1.PersistentVolumeClaim",
    "v1/Pod": "io.k8s.api.core.v1.Pod",
    "v1/PodTemplate": "io.k8s.api.core.v1.PodTemplate",
    "v1/ReplicationController": "io.k8s.api.core.v1.ReplicationController",
    "v1/ResourceQuota": "io.k8s.api.core.v1.ResourceQuota",
    "v1/Secret": "io.k8s.api.core.v1.Secret",
    "v1/Service": "io.k8s.api.core.v1.Service",
    "v1/ServiceAccount": "io.k8s.api.core.v1.ServiceAccount"
  },
  "definitions": {
    "io.k8s.api.admissionregistration.v1.MutatingWebhook": {
      "matchConditions": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      }
    },
    "io.k8s.api.admissionregistration.v1.MutatingWebhookConfiguration": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "webhooks": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.admissionregistration.v1.MutatingWebhook"
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicy": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec"
      },
      "status": {
        "object": "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus"
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBinding": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec"
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyBindingSpec": {
      "validationActions": {
        "listSet": true
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicySpec": {
      "matchConditions": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "variables": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingAdmissionPolicyStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingWebhook": {
      "matchConditions": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      }
    },
    "io.k8s.api.admissionregistration.v1.ValidatingWebhookConfiguration": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "webhooks": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.admissionregistration.v1.ValidatingWebhook"
      }
    },
    "io.k8s.api.apps.v1.ControllerRevision": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.apps.v1.DaemonSet": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.apps.v1.DaemonSetSpec"
      },
      "status": {
        "object": "io.k8s.api.apps.v1.DaemonSetStatus"
      }
    },
    "io.k8s.api.apps.v1.DaemonSetSpec": {
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.apps.v1.DaemonSetStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.apps.v1.Deployment": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.apps.v1.DeploymentSpec"
      },
      "status": {
        "object": "io.k8s.api.apps.v1.DeploymentStatus"
      }
    },
    "io.k8s.api.apps.v1.DeploymentSpec": {
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.apps.v1.DeploymentStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.apps.v1.ReplicaSet": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.apps.v1.ReplicaSetSpec"
      },
      "status": {
        "object": "io.k8s.api.apps.v1.ReplicaSetStatus"
      }
    },
    "io.k8s.api.apps.v1.ReplicaSetSpec": {
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.apps.v1.ReplicaSetStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.apps.v1.StatefulSet": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.apps.v1.StatefulSetSpec"
      },
      "status": {
        "object": "io.k8s.api.apps.v1.StatefulSetStatus"
      }
    },
    "io.k8s.api.apps.v1.StatefulSetSpec": {
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      },
      "volumeClaimTemplates": {
        "items": "io.k8s.api.core.v1.PersistentVolumeClaim"
      }
    },
    "io.k8s.api.apps.v1.StatefulSetStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.autoscaling.v1.HorizontalPodAutoscaler": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscaler": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus"
      }
    },
    "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.batch.v1.CronJob": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.batch.v1.CronJobSpec"
      }
    },
    "io.k8s.api.batch.v1.CronJobSpec": {
      "jobTemplate": {
        "object": "io.k8s.api.batch.v1.JobTemplateSpec"
      }
    },
    "io.k8s.api.batch.v1.Job": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.batch.v1.JobSpec"
      },
      "status": {
        "object": "io.k8s.api.batch.v1.JobStatus"
      }
    },
    "io.k8s.api.batch.v1.JobSpec": {
      "podFailurePolicy": {
        "object": "io.k8s.api.batch.v1.PodFailurePolicy"
      },
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.batch.v1.JobStatus": {
      "uncountedTerminatedPods": {
        "object": "io.k8s.api.batch.v1.UncountedTerminatedPods"
      }
    },
    "io.k8s.api.batch.v1.JobTemplateSpec": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.batch.v1.JobSpec"
      }
    },
    "io.k8s.api.batch.v1.PodFailurePolicy": {
      "rules": {
        "items": "io.k8s.api.batch.v1.PodFailurePolicyRule"
      }
    },
    "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement": {
      "values": {
        "listSet": true
      }
    },
    "io.k8s.api.batch.v1.PodFailurePolicyRule": {
      "onExitCodes": {
        "object": "io.k8s.api.batch.v1.PodFailurePolicyOnExitCodesRequirement"
      }
    },
    "io.k8s.api.batch.v1.UncountedTerminatedPods": {
      "failed": {
        "listSet": true
      },
      "succeeded": {
        "listSet": true
      }
    },
    "io.k8s.api.certificates.v1.CertificateSigningRequest": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.api.certificates.v1.CertificateSigningRequestStatus"
      }
    },
    "io.k8s.api.certificates.v1.CertificateSigningRequestStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.coordination.v1.Lease": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.ConfigMap": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.Container": {
      "env": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "ports": {
        "listMapKeys": [
          "containerPort",
          "protocol"
        ],
        "keyDefaults": {
          "containerPort": 0,
          "protocol": "TCP"
        }
      },
      "resources": {
        "object": "io.k8s.api.core.v1.ResourceRequirements"
      },
      "restartPolicyRules": {
        "items": "io.k8s.api.core.v1.ContainerRestartRule"
      },
      "volumeDevices": {
        "listMapKeys": [
          "devicePath"
        ],
        "keyDefaults": {
          "devicePath": ""
        }
      },
      "volumeMounts": {
        "listMapKeys": [
          "mountPath"
        ],
        "keyDefaults": {
          "mountPath": ""
        }
      }
    },
    "io.k8s.api.core.v1.ContainerRestartRule": {
      "exitCodes": {
        "object": "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes"
      }
    },
    "io.k8s.api.core.v1.ContainerRestartRuleOnExitCodes": {
      "values": {
        "listSet": true
      }
    },
    "io.k8s.api.core.v1.ContainerStatus": {
      "allocatedResourcesStatus": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.core.v1.ResourceStatus"
      },
      "resources": {
        "object": "io.k8s.api.core.v1.ResourceRequirements"
      },
      "volumeMounts": {
        "listMapKeys": [
          "mountPath"
        ],
        "keyDefaults": {
          "mountPath": ""
        }
      }
    },
    "io.k8s.api.core.v1.Endpoints": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.EphemeralContainer": {
      "env": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "ports": {
        "listMapKeys": [
          "containerPort",
          "protocol"
        ],
        "keyDefaults": {
          "containerPort": 0,
          "protocol": "TCP"
        }
      },
      "resources": {
        "object": "io.k8s.api.core.v1.ResourceRequirements"
      },
      "restartPolicyRules": {
        "items": "io.k8s.api.core.v1.ContainerRestartRule"
      },
      "volumeDevices": {
        "listMapKeys": [
          "devicePath"
        ],
        "keyDefaults": {
          "devicePath": ""
        }
      },
      "volumeMounts": {
        "listMapKeys": [
          "mountPath"
        ],
        "keyDefaults": {
          "mountPath": ""
        }
      }
    },
    "io.k8s.api.core.v1.EphemeralVolumeSource": {
      "volumeClaimTemplate": {
        "object": "io.k8s.api.core.v1.PersistentVolumeClaimTemplate"
      }
    },
    "io.k8s.api.core.v1.Event": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.LimitRange": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.Namespace": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.api.core.v1.NamespaceStatus"
      }
    },
    "io.k8s.api.core.v1.NamespaceStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.core.v1.Node": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.core.v1.NodeSpec"
      },
      "status": {
        "object": "io.k8s.api.core.v1.NodeStatus"
      }
    },
    "io.k8s.api.core.v1.NodeSpec": {
      "podCIDRs": {
        "listSet": true
      }
    },
    "io.k8s.api.core.v1.NodeStatus": {
      "addresses": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      },
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.core.v1.PersistentVolume": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.PersistentVolumeClaim": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.api.core.v1.PersistentVolumeClaimStatus"
      }
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.core.v1.PersistentVolumeClaimTemplate": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.Pod": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.core.v1.PodSpec"
      },
      "status": {
        "object": "io.k8s.api.core.v1.PodStatus"
      }
    },
    "io.k8s.api.core.v1.PodSpec": {
      "containers": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.core.v1.Container"
      },
      "ephemeralContainers": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.core.v1.EphemeralContainer"
      },
      "hostAliases": {
        "listMapKeys": [
          "ip"
        ],
        "keyDefaults": {
          "ip": ""
        }
      },
      "imagePullSecrets": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "initContainers": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.core.v1.Container"
      },
      "resourceClaims": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "resources": {
        "object": "io.k8s.api.core.v1.ResourceRequirements"
      },
      "schedulingGates": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "topologySpreadConstraints": {
        "listMapKeys": [
          "topologyKey",
          "whenUnsatisfiable"
        ],
        "keyDefaults": {
          "topologyKey": "",
          "whenUnsatisfiable": ""
        }
      },
      "volumes": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        },
        "items": "io.k8s.api.core.v1.Volume"
      }
    },
    "io.k8s.api.core.v1.PodStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      },
      "containerStatuses": {
        "items": "io.k8s.api.core.v1.ContainerStatus"
      },
      "ephemeralContainerStatuses": {
        "items": "io.k8s.api.core.v1.ContainerStatus"
      },
      "initContainerStatuses": {
        "items": "io.k8s.api.core.v1.ContainerStatus"
      },
      "podIPs": {
        "listMapKeys": [
          "ip"
        ],
        "keyDefaults": {
          "ip": ""
        }
      },
      "resourceClaimStatuses": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      },
      "resources": {
        "object": "io.k8s.api.core.v1.ResourceRequirements"
      }
    },
    "io.k8s.api.core.v1.PodTemplate": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.core.v1.PodTemplateSpec": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.core.v1.PodSpec"
      }
    },
    "io.k8s.api.core.v1.ReplicationController": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.core.v1.ReplicationControllerSpec"
      },
      "status": {
        "object": "io.k8s.api.core.v1.ReplicationControllerStatus"
      }
    },
    "io.k8s.api.core.v1.ReplicationControllerSpec": {
      "template": {
        "object": "io.k8s.api.core.v1.PodTemplateSpec"
      }
    },
    "io.k8s.api.core.v1.ReplicationControllerStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.core.v1.ResourceQuota": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.ResourceRequirements": {
      "claims": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      }
    },
    "io.k8s.api.core.v1.ResourceStatus": {
      "resources": {
        "listMapKeys": [
          "resourceID"
        ],
        "keyDefaults": {
          "resourceID": ""
        }
      }
    },
    "io.k8s.api.core.v1.Secret": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.core.v1.Service": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.core.v1.ServiceSpec"
      },
      "status": {
        "object": "io.k8s.api.core.v1.ServiceStatus"
      }
    },
    "io.k8s.api.core.v1.ServiceAccount": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "secrets": {
        "listMapKeys": [
          "name"
        ]
      }
    },
    "io.k8s.api.core.v1.ServiceSpec": {
      "ports": {
        "listMapKeys": [
          "port",
          "protocol"
        ],
        "keyDefaults": {
          "port": 0,
          "protocol": "TCP"
        }
      }
    },
    "io.k8s.api.core.v1.ServiceStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.core.v1.Volume": {
      "ephemeral": {
        "object": "io.k8s.api.core.v1.EphemeralVolumeSource"
      }
    },
    "io.k8s.api.discovery.v1.Endpoint": {
      "addresses": {
        "listSet": true
      }
    },
    "io.k8s.api.discovery.v1.EndpointSlice": {
      "endpoints": {
        "items": "io.k8s.api.discovery.v1.Endpoint"
      },
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.events.v1.Event": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.networking.v1.Ingress": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.networking.v1.IngressClass": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.networking.v1.NetworkPolicy": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.node.v1.RuntimeClass": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.policy.v1.PodDisruptionBudget": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.api.policy.v1.PodDisruptionBudgetStatus"
      }
    },
    "io.k8s.api.policy.v1.PodDisruptionBudgetStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.api.rbac.v1.ClusterRole": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.rbac.v1.ClusterRoleBinding": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.rbac.v1.Role": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.rbac.v1.RoleBinding": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.scheduling.v1.PriorityClass": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.storage.v1.CSIDriver": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.storage.v1.CSIDriverSpec"
      }
    },
    "io.k8s.api.storage.v1.CSIDriverSpec": {
      "volumeLifecycleModes": {
        "listSet": true
      }
    },
    "io.k8s.api.storage.v1.CSINode": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.api.storage.v1.CSINodeSpec"
      }
    },
    "io.k8s.api.storage.v1.CSINodeSpec": {
      "drivers": {
        "listMapKeys": [
          "name"
        ],
        "keyDefaults": {
          "name": ""
        }
      }
    },
    "io.k8s.api.storage.v1.CSIStorageCapacity": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.storage.v1.StorageClass": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.api.storage.v1.VolumeAttachment": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinition": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "spec": {
        "object": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec"
      },
      "status": {
        "object": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus"
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionSpec": {
      "versions": {
        "items": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion"
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionVersion": {
      "schema": {
        "object": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation"
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceValidation": {
      "openAPIV3Schema": {
        "object": "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps"
      }
    },
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSONSchemaProps": {
      "x-kubernetes-validations": {
        "listMapKeys": [
          "rule"
        ],
        "keyDefaults": {
          "rule": ""
        }
      }
    },
    "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {
      "finalizers": {
        "listSet": true
      },
      "ownerReferences": {
        "listMapKeys": [
          "uid"
        ],
        "keyDefaults": {
          "uid": ""
        }
      }
    },
    "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIService": {
      "metadata": {
        "object": "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"
      },
      "status": {
        "object": "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus"
      }
    },
    "io.k8s.kube-aggregator.pkg.apis.apiregistration.v1.APIServiceStatus": {
      "conditions": {
        "listMapKeys": [
          "type"
        ],
        "keyDefaults": {
          "type": ""
        }
      }
    }
  }
}
;
