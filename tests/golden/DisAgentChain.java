/*
 * Runs the DIS Agent's own converter chain (its classes, compiled from a
 * checkout by tests/golden/run) over records read from standard input and
 * prints what the DIS Agent would send for each: the expected bytes of
 * tests/unit/records/check_convert.c come from here.  It does what the
 * DIS Agent's FileFlow/DISFileFlow.buildConverterChain,
 * AbstractParser.buildRecord and AbstractRecord do around the chain:
 * fileEncoding added to every option, SINGLELINE when the list is empty,
 * the raw record when the chain throws, and the trailing delimiter dropped
 * unless isRemainRecordDelimiter.
 *
 * java DisAgentChain OPTIONS.yml DELIM REMAIN ENCODING < records
 *   OPTIONS.yml: a YAML list, as dataProcessingOptions in agent.yml
 *   DELIM: the record delimiter as a decimal byte (10 for '\n')
 * Records are split as the DIS Agent's SingleLineSplitter does (each keeps
 * its delimiter); bytes after the last delimiter are a last record.
 * Output, one line per record: "SEND <hex>", "RAW <hex>" (the chain threw)
 * or "SKIP" (the chain returned null: the record is not sent).
 */
import java.io.ByteArrayOutputStream;
import java.io.FileInputStream;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.nio.charset.Charset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedList;
import java.util.List;
import java.util.Map;

import org.yaml.snakeyaml.Yaml;

import com.huaweicloud.dis.agent.config.Configuration;
import com.huaweicloud.dis.agent.processing.exceptions.DataConversionException;
import com.huaweicloud.dis.agent.processing.interfaces.IDataConverter;
import com.huaweicloud.dis.agent.processing.processors.AgentDataConverterChain;
import com.huaweicloud.dis.agent.processing.utils.ProcessingUtilsFactory;

public class DisAgentChain
{
    @SuppressWarnings("unchecked")
    public static void main(String[] args) throws Exception
    {
        List<Object> opts;
        try (InputStream in = new FileInputStream(args[0]))
        {
            opts = (List<Object>)new Yaml().load(in);
        }
        byte delim = (byte)Integer.parseInt(args[1]);
        boolean remain = Boolean.parseBoolean(args[2]);
        Charset cs = Charset.forName(args[3]);
        List<Configuration> confs = new ArrayList<>();
        if (opts == null || opts.isEmpty())
        {
            Map<String, Object> m = new HashMap<>();
            m.put("optionName", ProcessingUtilsFactory.DataConversionOption.SINGLELINE);
            m.put("fileEncoding", cs);
            confs.add(new Configuration(m));
        }
        else
        {
            for (Object o : opts)
            {
                Map<String, Object> m = new HashMap<>((Map<String, Object>)o);
                m.put("fileEncoding", cs);
                confs.add(new Configuration(m));
            }
        }
        List<IDataConverter> convs = new LinkedList<>();
        for (Configuration c : confs)
            convs.add(ProcessingUtilsFactory.getDataConverter(c));
        IDataConverter chain = new AgentDataConverterChain(convs);

        ByteArrayOutputStream all = new ByteArrayOutputStream();
        byte[] b = new byte[65536];
        int n;
        while ((n = System.in.read(b)) > 0)
            all.write(b, 0, n);
        byte[] data = all.toByteArray();
        StringBuilder out = new StringBuilder();
        int start = 0;
        for (int i = 0; i <= data.length; i++)
        {
            if (i < data.length && data[i] != delim)
                continue;
            int end = i < data.length ? i + 1 : i;
            if (end == start)
                break;
            byte[] rec = java.util.Arrays.copyOfRange(data, start, end);
            start = end;
            ByteBuffer res;
            String kind = "SEND";
            try
            {
                res = chain.convert(ByteBuffer.wrap(rec));
            }
            catch (DataConversionException e)
            {
                res = ByteBuffer.wrap(rec);
                kind = "RAW";
            }
            if (res == null)
            {
                out.append("SKIP\n");
                continue;
            }
            byte[] r = new byte[res.remaining()];
            res.get(r);
            int len = r.length;
            if (len > 0 && r[len - 1] == delim && !remain)
                len--;
            out.append(kind).append(' ');
            for (int k = 0; k < len; k++)
                out.append(String.format("%02x", r[k] & 0xff));
            out.append('\n');
        }
        System.out.print(out);
    }
}
