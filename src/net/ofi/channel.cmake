# The libfabric network channel (Debian's libfabric-dev): RCOLL_WITH_OFI=AUTO|ON|OFF. Its
# multi-node tests run over the tcp provider (tcp;ofi_rxm). libfabric is opened when a team
# first uses the channel, not linked (lib.c says why).
rcoll_net_channel(NAME ofi OPTION OFI PKG libfabric DLOPEN
  DEFS RCOLL_HAVE_OFI=1
  TEST_ENV "FI_PROVIDER=tcp")
