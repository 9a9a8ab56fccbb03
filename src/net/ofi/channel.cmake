# The libfabric network channel (Debian's libfabric-dev): RCOLL_WITH_OFI=AUTO|ON|OFF. Its
# multi-node tests run over the tcp provider (tcp;ofi_rxm).
rcoll_net_channel(NAME ofi OPTION OFI PKG libfabric
  DEFS RCOLL_HAVE_OFI=1
  TEST_ENV "FI_PROVIDER=tcp")
