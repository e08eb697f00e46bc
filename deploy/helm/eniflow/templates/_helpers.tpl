{{/* The release's name prefix: the release name when it already says eniflow, else <release>-eniflow. */}}
{{- define "eniflow.fullname" -}}
{{- if contains .Chart.Name .Release.Name -}}
{{- .Release.Name | trunc 40 | trimSuffix "-" -}}
{{- else -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 40 | trimSuffix "-" -}}
{{- end -}}
{{- end -}}

{{/* Selector labels of one process; call with (dict "root" $ "component" "worker"). */}}
{{- define "eniflow.selectorLabels" -}}
app.kubernetes.io/name: {{ printf "eniflow-%s" .component }}
app.kubernetes.io/instance: {{ .root.Release.Name }}
{{- end -}}

{{/* Labels of every object of one process (component worker or watcher), as in the kustomize base plus Helm's. */}}
{{- define "eniflow.labels" -}}
{{ include "eniflow.selectorLabels" . }}
{{ include "eniflow.commonLabels" .root }}
{{- end -}}

{{/* Labels of objects shared by both processes. */}}
{{- define "eniflow.commonLabels" -}}
app.kubernetes.io/part-of: eniflow
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "eniflow.image" -}}
{{ printf "%s:%s" .Values.image.repository (default .Chart.AppVersion .Values.image.tag) }}
{{- end -}}
