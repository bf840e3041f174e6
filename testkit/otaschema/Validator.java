// Validator checks OpenTravel messages against the 2015A schemas in the folder named by its
// first argument (testkit/otaschema/xsd). It is run by otaschema.Start as a long-lived child
// process with `java Validator.java <xsd folder>` (single-file source launch, no build step).
//
// Protocol, on stdin and stdout: each request is a 4-byte big-endian length and that many
// bytes of XML; each answer is a 4-byte big-endian length and that many bytes of UTF-8 text,
// either "OK" or one line per problem: "line:column: message".
//
// The schema of a message is the file named like its root element (OTA_HotelAvailNotifRQ →
// OTA_HotelAvailNotifRQ.xsd), loaded once and kept. The roots named after the folder are
// loaded at once in the background (one loader thread: the SchemaFactory is not
// thread-safe), so that a first message of theirs does not wait for it. A SOAP 1.1 envelope is accepted as
// well: its Body's single element is validated (the Header, WS-Security, has no schema here).
// Line and column numbers are those of the message as sent, envelope included.
import java.io.*;
import java.nio.charset.StandardCharsets;
import java.nio.file.*;
import java.util.*;
import java.util.concurrent.*;
import javax.xml.XMLConstants;
import javax.xml.parsers.SAXParserFactory;
import javax.xml.transform.stream.StreamSource;
import javax.xml.validation.*;
import org.w3c.dom.ls.LSInput;
import org.w3c.dom.ls.LSResourceResolver;
import org.xml.sax.*;
import org.xml.sax.helpers.DefaultHandler;
import org.xml.sax.helpers.NamespaceSupport;

public class Validator {
    static final String OTA = "http://www.opentravel.org/OTA/2003/05";
    static final String SOAP = "http://schemas.xmlsoap.org/soap/envelope/";

    static Path dir;
    // touched by the main thread only; the schemas are loaded by the loader thread
    static final Map<String, Future<Schema>> schemas = new HashMap<>();
    static final ExecutorService loader = Executors.newSingleThreadExecutor(r -> {
        Thread t = new Thread(r, "schema-loader");
        t.setDaemon(true);
        return t;
    });
    static SchemaFactory factory;
    static SAXParserFactory parsers;

    public static void main(String[] args) throws Exception {
        dir = Paths.get(args[0]).toAbsolutePath().normalize();
        factory = SchemaFactory.newInstance(XMLConstants.W3C_XML_SCHEMA_NS_URI);
        // Only the schemas of the folder: an include or import naming anything else fails.
        factory.setResourceResolver(new LocalOnly());
        parsers = SAXParserFactory.newInstance();
        parsers.setNamespaceAware(true);
        parsers.setFeature("http://apache.org/xml/features/disallow-doctype-decl", true);
        parsers.setFeature(XMLConstants.FEATURE_SECURE_PROCESSING, true);

        DataInputStream in = new DataInputStream(new BufferedInputStream(System.in));
        DataOutputStream out = new DataOutputStream(new BufferedOutputStream(System.out));
        for (String preload : Arrays.copyOfRange(args, 1, args.length)) {
            load(preload);
        }
        while (true) {
            int n;
            try {
                n = in.readInt();
            } catch (EOFException e) {
                return;
            }
            byte[] msg = new byte[n];
            in.readFully(msg);
            String answer;
            try {
                answer = validate(msg);
            } catch (Throwable t) {
                answer = "0:0: " + t;
            }
            byte[] b = answer.getBytes(StandardCharsets.UTF_8);
            out.writeInt(b.length);
            out.write(b);
            out.flush();
        }
    }

    static Future<Schema> load(String root) {
        return schemas.computeIfAbsent(root, r -> loader.submit(() -> {
            if (!r.matches("OTA_[A-Za-z]+")) {
                throw new IllegalArgumentException("no OpenTravel schema for the element " + r);
            }
            Path file = dir.resolve(r + ".xsd");
            if (!Files.isRegularFile(file)) {
                throw new IllegalArgumentException("no OpenTravel schema for the element " + r);
            }
            return factory.newSchema(new StreamSource(file.toFile()));
        }));
    }

    static Schema schema(String root) throws Exception {
        Future<Schema> f = load(root);
        try {
            return f.get();
        } catch (ExecutionException e) {
            if (!root.matches("OTA_[A-Za-z]+") || !Files.isRegularFile(dir.resolve(root + ".xsd"))) {
                schemas.remove(root); // a name without a schema: do not keep asking the loader
            }
            Throwable c = e.getCause();
            throw c instanceof Exception ? (Exception) c : new RuntimeException(c);
        }
    }

    static String validate(byte[] msg) throws Exception {
        Errors errs = new Errors();
        Router r = new Router(errs);
        XMLReader reader = parsers.newSAXParser().getXMLReader();
        reader.setContentHandler(r);
        reader.setErrorHandler(errs);
        try {
            reader.parse(new InputSource(new ByteArrayInputStream(msg)));
        } catch (SAXParseException e) {
            // already recorded by Errors.fatalError
        } catch (SAXException e) {
            errs.add(r.locator, e.getMessage());
        }
        if (errs.lines.isEmpty() && !r.seen) {
            errs.add(null, "no message element");
        }
        return errs.lines.isEmpty() ? "OK" : String.join("\n", errs.lines);
    }

    // Router hands the message element's events (the root, or a SOAP Body's child) to a
    // ValidatorHandler of its schema, and checks the envelope's shape around it.
    static class Router extends DefaultHandler {
        final Errors errs;
        Locator locator;
        final NamespaceSupport ns = new NamespaceSupport();
        boolean nsPushed;
        int depth; // element depth in the document
        int payloadDepth = -1; // the depth of the message element while inside it
        ValidatorHandler v;
        boolean seen;
        boolean envelope;
        boolean inBody;
        int bodyElements;

        Router(Errors errs) {
            this.errs = errs;
        }

        @Override
        public void setDocumentLocator(Locator l) {
            locator = l;
        }

        @Override
        public void startPrefixMapping(String prefix, String uri) throws SAXException {
            if (!nsPushed) {
                ns.pushContext();
                nsPushed = true;
            }
            ns.declarePrefix(prefix, uri);
            if (v != null) {
                v.startPrefixMapping(prefix, uri);
            }
        }

        @Override
        public void endPrefixMapping(String prefix) throws SAXException {
            if (v != null) {
                v.endPrefixMapping(prefix);
            }
        }

        @Override
        public void startElement(String uri, String local, String q, Attributes atts) throws SAXException {
            if (!nsPushed) {
                ns.pushContext();
            }
            nsPushed = false;
            depth++;
            if (v != null) {
                v.startElement(uri, local, q, atts);
                return;
            }
            if (depth == 1 && SOAP.equals(uri) && local.equals("Envelope")) {
                envelope = true;
                return;
            }
            if (envelope && depth == 2) {
                if (!SOAP.equals(uri) || !(local.equals("Header") || local.equals("Body"))) {
                    errs.add(locator, "unexpected element " + local + " in the SOAP envelope");
                }
                inBody = SOAP.equals(uri) && local.equals("Body");
                return;
            }
            if (envelope && depth > 2 && !inBody) {
                return; // the SOAP Header's content
            }
            if ((envelope && depth == 3) || (!envelope && depth == 1)) {
                bodyElements++;
                if (bodyElements > 1) {
                    errs.add(locator, "more than one element in the SOAP Body");
                    return;
                }
                if (!OTA.equals(uri)) {
                    errs.add(locator, "the element " + local + " is not in the OpenTravel namespace " + OTA);
                    return;
                }
                Schema s;
                try {
                    s = schema(local);
                } catch (Exception e) {
                    errs.add(locator, e.getMessage());
                    return;
                }
                seen = true;
                v = s.newValidatorHandler();
                v.setErrorHandler(errs);
                v.setDocumentLocator(locator);
                v.startDocument();
                // the namespaces declared around the message element are in scope for it
                for (Enumeration<?> e = ns.getPrefixes(); e.hasMoreElements();) {
                    String p = (String) e.nextElement();
                    if (p.equals("xml")) {
                        continue;
                    }
                    v.startPrefixMapping(p, ns.getURI(p));
                }
                String def = ns.getURI("");
                if (def != null) {
                    v.startPrefixMapping("", def);
                }
                payloadDepth = depth;
                v.startElement(uri, local, q, atts);
            }
        }

        @Override
        public void endElement(String uri, String local, String q) throws SAXException {
            ns.popContext();
            if (v != null) {
                v.endElement(uri, local, q);
                if (depth == payloadDepth) {
                    v.endDocument();
                    v = null;
                    payloadDepth = -1;
                }
            }
            if (envelope && depth == 2) {
                inBody = false;
            }
            depth--;
        }

        @Override
        public void characters(char[] ch, int start, int len) throws SAXException {
            if (v != null) {
                v.characters(ch, start, len);
            }
        }

        @Override
        public void ignorableWhitespace(char[] ch, int start, int len) throws SAXException {
            if (v != null) {
                v.ignorableWhitespace(ch, start, len);
            }
        }

        @Override
        public void endDocument() {
            if (envelope && bodyElements == 0) {
                errs.add(null, "the SOAP Body holds no message");
            }
        }
    }

    static class Errors implements ErrorHandler {
        final List<String> lines = new ArrayList<>();

        void add(Locator l, String msg) {
            int line = l == null ? 0 : l.getLineNumber();
            int col = l == null ? 0 : l.getColumnNumber();
            lines.add(line + ":" + col + ": " + msg.replace('\n', ' '));
        }

        void add(SAXParseException e) {
            lines.add(e.getLineNumber() + ":" + e.getColumnNumber() + ": " + String.valueOf(e.getMessage()).replace('\n', ' '));
        }

        public void warning(SAXParseException e) {
        }

        public void error(SAXParseException e) {
            add(e);
        }

        public void fatalError(SAXParseException e) throws SAXException {
            add(e);
            throw e;
        }
    }

    // LocalOnly resolves the schemas' includes within the folder and refuses anything else.
    static class LocalOnly implements LSResourceResolver {
        public LSInput resolveResource(String type, String namespace, String publicId, String systemId, String baseURI) {
            if (systemId == null) {
                throw new IllegalArgumentException("a schema reference without a location");
            }
            Path p = dir.resolve(Paths.get(systemId).getFileName().toString()).normalize();
            if (!p.startsWith(dir) || !Files.isRegularFile(p)) {
                throw new IllegalArgumentException("schema " + systemId + " is not in " + dir);
            }
            return new Input(p, publicId);
        }
    }

    static class Input implements LSInput {
        final Path p;
        final String publicId;

        Input(Path p, String publicId) {
            this.p = p;
            this.publicId = publicId;
        }

        public Reader getCharacterStream() { return null; }
        public void setCharacterStream(Reader r) {}
        public InputStream getByteStream() {
            try {
                return Files.newInputStream(p);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        public void setByteStream(InputStream s) {}
        public String getStringData() { return null; }
        public void setStringData(String s) {}
        public String getSystemId() { return p.toUri().toString(); }
        public void setSystemId(String s) {}
        public String getPublicId() { return publicId; }
        public void setPublicId(String s) {}
        public String getBaseURI() { return p.toUri().toString(); }
        public void setBaseURI(String s) {}
        public String getEncoding() { return null; }
        public void setEncoding(String s) {}
        public boolean getCertifiedText() { return false; }
        public void setCertifiedText(boolean b) {}
    }
}
