# What the generator examples share (included by hugo/, jekyll/, mkdocs/ and sphinx/ Makefiles, after
# they set DEPFILE): the depfile included, so that make reruns the build only when one of the files
# imgbake read changed; and `make demo`, the build against a loopback origin serving ../images as
# http://images.test.

# Not for `make demo` or `make clean`: make remakes an included file before anything else.
ifeq ($(filter demo clean,$(MAKECMDGOALS)),)
-include $(DEPFILE)
endif

.PHONY: demo
demo:
	python3 ../../Tests/Support/origin.py --root ../images --watch-parent > .origin.port & origin=$$!; \
	  for i in $$(seq 50); do grep -q PORT .origin.port 2>/dev/null && break; sleep 0.1; done; \
	  $(MAKE) IMGBAKE_FLAGS="--connect-to images.test:80:127.0.0.1:$$(awk '/PORT/ {print $$2}' .origin.port) $(IMGBAKE_FLAGS)"; \
	  status=$$?; kill $$origin; rm -f .origin.port; exit $$status
