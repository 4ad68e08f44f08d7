# frozen_string_literal: true

require "digest"
require "fileutils"
require "jekyll"
require "json"
require "open3"
require "tmpdir"

module Jekyll
  # imgbake on the written site: after `jekyll build` and after each regeneration of `jekyll serve`,
  # `imgbake build _site` localises every image in place, from the image cache kept between builds.
  #
  #   plugins: [jekyll-imgbake]
  #   imgbake:                  # all optional
  #     config: imgbake.toml    # read when it exists beside _config.yml
  #     binary: imgbake         # else $IMGBAKE, else `imgbake` on PATH
  #     cache_dir: ~/.cache/imgbake
  #     args: [--offline]       # more arguments for `imgbake build`
  #     images: { widths: [480, 960] }   # or tables of imgbake.toml here instead of a file
  module Imgbake
    INSTALL = "imgbake is not installed: install the package from https://github.com/imgbake/imgbake/releases " \
              "(Debian 12: `sudo apt install ./imgbake_<version>_amd64.deb`) or build it from source with `make release`, " \
              "then put `imgbake` on PATH or name it with `imgbake: binary:` in _config.yml or the IMGBAKE environment variable"
    TABLES = %w[output images fetch cache build].freeze
    DIAGNOSTIC = /\A(?<where>.*?):? ?\b(?<severity>warning|error|note): (?<text>.*)\z/.freeze

    # A reason the site's images were not localised; Jekyll stops the build with it (`jekyll serve`
    # shows it and goes on watching).
    class Error < Jekyll::Errors::FatalException; end

    module_function

    def options(site)
      site.config["imgbake"] || {}
    end

    def enabled?(site)
      options(site)["enabled"] != false
    end

    # The imgbake executable: the option (a path, or a command on PATH), else $IMGBAKE, else `imgbake`.
    def binary(site)
      named = options(site)["binary"] || ENV["IMGBAKE"]
      name = File.expand_path(named || "imgbake") if (named || "").include?("/")
      candidates = name ? [name] : ENV.fetch("PATH", "").split(File::PATH_SEPARATOR).map { |dir| File.join(dir, named || "imgbake") }
      found = candidates.find { |path| File.file?(path) && File.executable?(path) }
      return found if found

      raise Error, (named ? "imgbake binary #{named.inspect} not found or not executable. " : "") + INSTALL
    end

    # The imgbake.toml to give: the user's file, or one written from the tables in _config.yml (with
    # where the site is served, unless they say: `url` + `baseurl` as the site's URL, or `baseurl`
    # alone as its root, as Jekyll's own relative_url takes it). Not both: Ruby has no TOML reader to
    # lay one over the other.
    def settings(site)
      file = options(site)["config"] || ("imgbake.toml" if File.file?(File.join(site.source, "imgbake.toml")))
      tables = options(site).slice(*TABLES)
      if file && !tables.empty?
        raise Error, "imgbake: give either `config` (an imgbake.toml) or tables of settings under `imgbake:` in _config.yml, not both"
      end
      return File.expand_path(file, site.source) if file

      served = served_at(site)
      tables = { "output" => served }.merge(tables) { |_, ours, theirs| ours.merge(theirs) } unless served.empty?
      write(toml(tables))
    end

    # A project site (`baseurl: /proj`) is served under its base URL with or without a `url`: the images
    # folder's address must carry it too (/proj/_img/...), as relative_url writes the pages' own links.
    def served_at(site)
      url = site.config["url"].to_s.chomp("/")
      base = site.config["baseurl"].to_s.gsub(%r{\A/+|/+\z}, "")
      return { "base_url" => base.empty? ? url : "#{url}/#{base}" } unless url.empty?
      return { "site_root" => "/#{base}/" } unless base.empty?

      {}
    end

    # Named by its content, so an unchanged configuration is the same file and the next build can
    # trust its seal.
    def write(text)
      folder = File.join(Dir.tmpdir, "imgbake-settings-#{Process.uid}")
      FileUtils.mkdir_p(folder, mode: 0o700)
      path = File.join(folder, "#{Digest::SHA256.hexdigest(text)[0, 16]}.toml")
      unless File.exist?(path)
        File.write("#{path}.#{Process.pid}.tmp", text)
        File.rename("#{path}.#{Process.pid}.tmp", path)
      end
      path
    end

    def toml(tables, path = [])
      values, subtables = tables.partition { |_, value| !value.is_a?(Hash) }
      lines = []
      lines << "[#{path.map { |part| key(part) }.join(".")}]" if !path.empty? && (!values.empty? || subtables.empty?)
      values.each { |name, value| lines << "#{key(name)} = #{value(value)}" }
      subtables.each { |name, table| lines << toml(table, path + [name]) }
      path.empty? ? "#{lines.join("\n")}\n" : lines.join("\n")
    end

    def key(name)
      name.to_s.match?(/\A[A-Za-z0-9_-]+\z/) ? name.to_s : JSON.generate(name.to_s)
    end

    def value(value)
      case value
      when true, false, Integer, Float then value.to_s
      when String, Symbol then JSON.generate(value.to_s)
      when Array then "[#{value.map { |item| value(item) }.join(", ")}]"
      when Hash then "{ #{value.map { |name, item| "#{key(name)} = #{value(item)}" }.join(", ")} }"
      else raise Error, "imgbake setting #{value.inspect}: cannot write a #{value.class}"
      end
    end

    # Runs `imgbake build` on the site's destination; warnings and notes through Jekyll's logger, a
    # failed build (exit 1) or wrong settings (exit 2) as an Error with imgbake's errors.
    def run(site)
      command = [binary(site), "build", site.dest, "--config", settings(site)]
      command += ["--cache-dir", File.expand_path(options(site)["cache_dir"])] if options(site)["cache_dir"]
      command += Array(options(site)["args"]).map(&:to_s)
      Jekyll.logger.debug "imgbake:", command.join(" ")
      stdout, stderr, status = Open3.capture3(*command)
      errors = []
      stderr.each_line(chomp: true) do |line|
        match = DIAGNOSTIC.match(line)
        next Jekyll.logger.debug("imgbake:", line) unless match # progress

        where = ["", "imgbake"].include?(match[:where]) ? "" : "#{match[:where]}: "
        case match[:severity]
        when "error" then errors << "#{where}#{match[:text]}"
        when "warning" then Jekyll.logger.warn "imgbake:", "#{where}#{match[:text]}"
        else Jekyll.logger.info "imgbake:", "#{where}#{match[:text]}"
        end
      end
      stdout.each_line(chomp: true) { |line| Jekyll.logger.info "imgbake:", line.strip.delete_prefix("imgbake: ") unless line.strip.empty? }
      return if status.success?

      raise Error, "imgbake build #{site.dest} failed (exit #{status.exitstatus})#{errors.empty? ? "" : ":\n#{errors.join("\n")}"}"
    rescue SystemCallError => e
      raise Error, "cannot run imgbake: #{e.message}. #{INSTALL}"
    end
  end
end

Jekyll::Hooks.register :site, :after_init do |site|
  next unless Jekyll::Imgbake.enabled?(site)

  # imgbake.toml beside _config.yml is imgbake's, not a file of the site.
  site.exclude << "imgbake.toml" unless site.exclude.include?("imgbake.toml")
  # The image files stay while Jekyll writes the site again (its cleaner removes what it did not
  # write): under `jekyll serve` they are there for the pages served before the rewrite, and imgbake
  # removes those no page uses any more itself.
  images = (Jekyll::Imgbake.options(site)["output"] || {})["images_dir"] || "_img"
  site.keep_files << images unless site.keep_files.include?(images)
  Jekyll::Imgbake.binary(site) # a missing binary stops the build before it starts
end

# Before `jekyll serve --livereload`'s own post_write hook (normal priority), so the browser reloads
# the page once its images are local.
Jekyll::Hooks.register :site, :post_write, priority: :high do |site|
  Jekyll::Imgbake.run(site) if Jekyll::Imgbake.enabled?(site)
end
