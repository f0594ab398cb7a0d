"""Logging as kube-scheduler logs: klog text or JSON, verbosity levels, key/value pairs.

``configure(verbosity, fmt)`` sets up the root logger; :func:`v_info` logs a message at a klog
verbosity with key/value pairs (``v_info(log, 2, "Successfully bound pod to node", pod=kobj,
node="n1")``). Follows ``k8s.io/component-base/logs`` (``--logging-format=text|json``, ``-v``).
"""

from kubesched.logs.kv import KObj, v_info, v_level
from kubesched.logs.setup import FORMATS, configure

__all__ = ["FORMATS", "KObj", "configure", "v_info", "v_level"]
