# The UCX network channel (Debian's libucx-dev): RCOLL_WITH_UCX=AUTO|ON|OFF. Its multi-node
# tests run over UCX's tcp transport; UCM (in libucs) gives the registration cache its unmap
# monitor (net/memhooks.c).
rcoll_net_channel(NAME ucx OPTION UCX PKG ucx
  DEFS RCOLL_HAVE_UCX=1 RCOLL_HAVE_UCM=1
  TEST_ENV "UCX_TLS=tcp")
